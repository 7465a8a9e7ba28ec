// The one function is inline in include/MallocTuning.h; SwiftPM needs a source file.
#include "MallocTuning.h"
