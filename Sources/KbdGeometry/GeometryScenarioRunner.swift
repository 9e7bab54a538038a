/// The library side of `kbd-commandd geometry SCENARIO.json [--svg FILE]`:
/// scenario text in, output lines (and a drawing) out, no file I/O.
public enum GeometryScenarioRunner {
    /// One compact JSON line (without newline) per state: step 0, then one
    /// after each step, in the format of DESIGN.md's Geometry section.
    public static func run(text: String) throws(GeometryScenarioError) -> [String] {
        try GeometryScenario.parse(text).outputLines()
    }

    /// The scenario drawn as SVG, one panel per step (see ``GeometrySVG``).
    public static func svg(text: String) throws(GeometryScenarioError) -> String {
        GeometrySVG.render(scenario: try GeometryScenario.parse(text))
    }
}
