public import KbdJSON
public import KbdGeometry

/// The layout guide on the wire: a `geometry` event's fields and the subscribe reply's
/// `geometry` object are a `GeometryReport` (`layout`, `keyboard_frame`, `windows`, written by
/// the report's own `jsonObject()`), read back here into the same typed value. Reading and
/// writing again gives the same bytes (docs/protocol.md, "geometry").
extension GeometryReport {
    /// Reads a report from `o`'s `layout`, `keyboard_frame` (a rectangle or null) and
    /// `windows`; other members (`event`, `time`) are the caller's.
    public static func decode(_ o: JSONObjectNode) throws(JSONDecodingError) -> GeometryReport {
        let layoutNode = try o.required("layout")
        let name = try layoutNode.string()
        guard let layout = GeometryLayout(rawValue: name) else {
            throw layoutNode.error("unknown layout '\(name)'; expected \(GeometryLayout.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        var windows: [WindowReport] = []
        for item in try o.required("windows").array() { windows.append(try WindowReport.decode(try item.object())) }
        return GeometryReport(layout: layout, keyboardFrame: try Rect.decodeOptional(try o.required("keyboard_frame")), windows: windows)
    }
}

extension WindowReport {
    /// `{"id","guide","bottom_offset","near","away","dismissed","dismiss_region","active_rules",
    /// "activated","deactivated"}`; `away` must be the edges not `near` (it is derived).
    static func decode(_ o: JSONObjectNode) throws(JSONDecodingError) -> WindowReport {
        func strings(_ key: String) throws(JSONDecodingError) -> [String] {
            var out: [String] = []
            for item in try o.required(key).array() { out.append(try item.string()) }
            return out
        }
        let near = try EdgeSet.decode(try o.required("near"))
        let awayNode = try o.required("away")
        guard try EdgeSet.decode(awayNode) == near.complement else { throw awayNode.error("expected the edges not in \"near\"") }
        return WindowReport(id: try o.required("id").string(), guide: try Rect.decode(try o.required("guide").object()),
                            bottomOffset: try o.required("bottom_offset").number(), near: near,
                            dismissed: try o.required("dismissed").bool(), dismissRegion: try Rect.decodeOptional(try o.required("dismiss_region")),
                            activeRules: try strings("active_rules"), activated: try strings("activated"), deactivated: try strings("deactivated"))
    }
}

extension Rect {
    /// `{"x","y","width","height"}`.
    static func decode(_ o: JSONObjectNode) throws(JSONDecodingError) -> Rect {
        Rect(x: try o.required("x").number(), y: try o.required("y").number(),
             width: try o.required("width").number(), height: try o.required("height").number())
    }

    /// A rectangle, or nil for `null`.
    static func decodeOptional(_ node: JSONNode) throws(JSONDecodingError) -> Rect? {
        node.value == .null ? nil : try decode(try node.object())
    }
}

extension EdgeSet {
    /// `["top","leading"]`: each edge once, in the order `jsonValue` writes them.
    static func decode(_ node: JSONNode) throws(JSONDecodingError) -> EdgeSet {
        var edges: [Edge] = []
        for item in try node.array() {
            let name = try item.string()
            guard let edge = Edge(rawValue: name) else { throw item.error("unknown edge '\(name)'; expected top, bottom, leading or trailing") }
            edges.append(edge)
        }
        guard edges == Edge.allCases.filter(edges.contains) else { throw node.error("expected each edge once, in the order top, bottom, leading, trailing") }
        return EdgeSet(edges)
    }
}
