/// "Did you mean …?": the names of a list nearest to a misspelt one, by edit distance
/// (insertions, deletions, substitutions and swaps of neighbours, case ignored).
public enum NearestNames {
    /// Up to `limit` names of `candidates` within the distance a typo makes (1 for names of up
    /// to 4 characters, 2 up to 8, else 3), nearest first, ties in the candidates' order.
    public static func nearest(to word: String, in candidates: some Sequence<String>, limit: Int = 3) -> [String] {
        let w = Array(word.lowercased().unicodeScalars)
        guard !w.isEmpty else { return [] }
        let allowed = w.count <= 4 ? 1 : w.count <= 8 ? 2 : 3
        var found: [(Int, Int, String)] = []
        for (i, c) in candidates.enumerated() {
            let s = Array(c.lowercased().unicodeScalars)
            guard abs(s.count - w.count) <= allowed else { continue }
            let d = distance(w, s, bound: allowed)
            if d <= allowed { found.append((d, i, c)) }
        }
        return found.sorted { ($0.0, $0.1) < ($1.0, $1.1) }.prefix(limit).map(\.2)
    }

    /// The optimal-string-alignment distance; anything above `bound` is reported as `bound + 1`.
    public static func distance(_ a: [Unicode.Scalar], _ b: [Unicode.Scalar], bound: Int = Int.max / 2) -> Int {
        if a.isEmpty { return min(b.count, bound + 1) }
        if b.isEmpty { return min(a.count, bound + 1) }
        var previous2 = [Int](repeating: 0, count: b.count + 1)
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            var rowMin = current[0]
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                var v = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] { v = min(v, previous2[j - 2] + 1) }
                current[j] = v
                rowMin = min(rowMin, v)
            }
            if rowMin > bound { return bound + 1 }
            (previous2, previous, current) = (previous, current, previous2)
        }
        return min(previous[b.count], bound + 1)
    }

    /// `'a'`, `'a' or 'b'`, `'a', 'b' or 'c'`.
    public static func list(_ names: [String], quote: String = "'") -> String {
        let q = names.map { quote + $0 + quote }
        guard q.count > 1 else { return q.first ?? "" }
        return q.dropLast().joined(separator: ", ") + " or " + q.last!
    }
}
