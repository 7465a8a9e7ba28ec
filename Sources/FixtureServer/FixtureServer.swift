import Hummingbird
import ServiceLifecycle
/// Placeholder until the fixture server lands (issue 3).
public enum FixtureServerPlaceholder {}
