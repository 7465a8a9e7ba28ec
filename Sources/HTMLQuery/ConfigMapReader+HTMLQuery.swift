import FeedCore

extension ConfigMapReader {
    /// The ``HTMLQuery`` at `key`, as Sources.yml writes it; one that is not understood is
    /// reported at the character where it goes wrong, with the language a selector may use.
    public func htmlQuery(_ key: String) -> HTMLQuery? {
        guard let text = string(key) else { return nil }
        do {
            return try HTMLQuery(text)
        } catch {
            var location = self.location(of: key)
            // A quoted value's text starts one column past its quote.
            if case .scalar(let scalar)? = node(key)?.value, scalar.quoted { location.column += 1 }
            location.column += error.offset
            report(key, "\"\(text)\" \(error.description) (CSS: type, .class, #id, [attr], [attr=v], descendant, >, +, ~, "
                + ":first-child, :last-child, :nth-child(), :not(); or xpath:…; then @attr for an attribute)", at: location)
            return nil
        }
    }
}
