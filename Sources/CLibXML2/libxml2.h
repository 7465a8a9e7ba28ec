// The libxml2 headers the HTML sources use (its HTML parser and serializer, and XPath
// 1.0): the module map names this file, as a system-library target must; no code of ours
// is here. Debian builds libxml2 with ICU, whose headers would clash with the ICU that
// Foundation carries; nothing here uses libxml2's ICU converters (their handler is only
// ever reached through a pointer), so its headers are left out.
#include <libxml/xmlversion.h>
#undef LIBXML_ICU_ENABLED
#include <libxml/HTMLparser.h>
#include <libxml/HTMLtree.h>
#include <libxml/xpath.h>
#include <libxml/xpathInternals.h>
