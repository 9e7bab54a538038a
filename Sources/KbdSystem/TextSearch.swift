// Substring search over UTF-8 code units. The standard library's `contains(_: String)` and
// `firstRange(of:)` live in _StringProcessing, whose code the static link brings into the
// service as one 400 KB section (with _RegexParser's 490 KB behind it) that cannot be
// reordered: each call at start-up kept several 64 KiB windows of it resident (issue 23).
// The needles here are ASCII words of config checks and library messages, where code-unit
// search and Character search agree.

extension StringProtocol {
    /// Whether `needle` occurs in the text (an empty needle always does).
    package func includes(_ needle: String) -> Bool {
        utf8Range(of: needle) != nil
    }

    /// The first occurrence of `needle`, as code-unit offsets from the start.
    package func utf8Range(of needle: String) -> Range<Int>? {
        let hay = Array(utf8), pattern = Array(needle.utf8)
        guard !pattern.isEmpty else { return 0..<0 }
        guard pattern.count <= hay.count else { return nil }
        var i = 0
        while i + pattern.count <= hay.count {
            if hay[i] == pattern[0] {
                var j = 1
                while j < pattern.count && hay[i + j] == pattern[j] { j += 1 }
                if j == pattern.count { return i..<(i + pattern.count) }
            }
            i += 1
        }
        return nil
    }

    /// The text after the first occurrence of `needle`, nil when it does not occur.
    package func text(after needle: String) -> Substring? {
        guard let r = utf8Range(of: needle) else { return nil }
        let s = Substring(self)
        return s[s.utf8.index(s.utf8.startIndex, offsetBy: r.upperBound)...]
    }
}
