import KbdCore
import KbdGeometry
import KbdControl
import Testing

@Suite("Geometry SVG")
struct GeometrySVGTests {
    static func count(_ needle: String, in text: String) -> Int {
        text.split(separator: needle, omittingEmptySubsequences: false).count - 1
    }

    @Test func drawsScreenWindowKeyboardGuideAndNearEdges() {
        let state = state(.docked(height: 398), window(0, 0, 1366, 1024, id: "main", dismissPadding: 44))
        let svg = GeometrySVG.render(state: state, report: GeometryModel.report(for: state), caption: "docked")
        #expect(svg.hasPrefix(#"<svg xmlns="http://www.w3.org/2000/svg""#))
        #expect(svg.hasSuffix("</svg>\n"))
        // Screen, window, keyboard, guide and dismiss region.
        #expect(svg.contains(##"<rect x="0" y="0" width="1366" height="1024" fill="#e5e7eb""##))
        #expect(svg.contains(##"<rect x="0" y="0" width="1366" height="1024" fill="#ffffff""##))
        #expect(svg.contains(##"<rect x="0" y="626" width="1366" height="398" fill="#374151""##))
        #expect(svg.contains(##"<rect x="0" y="626" width="1366" height="398" fill="#22c55e""##))
        #expect(svg.contains(##"<rect x="0" y="582" width="1366" height="44" fill="#f97316""##))
        // One near edge (bottom), as a thick red line.
        #expect(Self.count(#"<line"#, in: svg) == 1)
        #expect(svg.contains(##"<line x1="0" y1="1024" x2="1366" y2="1024" stroke="#dc2626""##))
        #expect(svg.contains(">docked</text>"))
        #expect(svg.contains(">near: bottom</text>"))
        #expect(svg.contains(">docked keyboard</text>"))
    }

    @Test func nearEdgesFollowTheWindowsDirection() {
        let rtl = window(0, 0, 1366, 1024, id: "rtl", follows: true, direction: .rtl)
        let state = state(.floating(frame: rect(0, 0, 320, 260)), rtl)
        let report = GeometryModel.report(for: state)
        #expect(report.windows[0].near == [.top, .trailing])
        let svg = GeometrySVG.render(state: state, report: report)
        // Top, then trailing: the left side in a right-to-left window.
        #expect(svg.contains(##"<line x1="0" y1="0" x2="1366" y2="0" stroke="#dc2626""##))
        #expect(svg.contains(##"<line x1="0" y1="0" x2="0" y2="1024" stroke="#dc2626""##))
        #expect(svg.contains(">rtl (rtl, follows)</text>"))
    }

    @Test func zeroHeightGuideIsADashedLineAndTextIsEscaped() {
        let state = state(.hidden, window(10, 20, 300, 400, id: #"<a & "b">"#, usesBottomSafeArea: false))
        let svg = GeometrySVG.render(state: state, report: GeometryModel.report(for: state))
        #expect(svg.contains(##"<line x1="10" y1="420" x2="310" y2="420" stroke="#15803d""##))
        #expect(svg.contains("&lt;a &amp; &quot;b&quot;&gt; (narrow, dismissed)"))
        #expect(!svg.contains(#"<a & "b">"#))
    }

    @Test func scenarioDrawsOnePanelPerStep() throws {
        let svg = try GeometryScenarioRunner.svg(text: GeometryScenarioTests.designScenario)
        #expect(Self.count("<g transform", in: svg) == 5)
        #expect(Self.count("</g>", in: svg) == 5)
        #expect(svg.contains(">step 0: layout docked, keyboard (0, 626, 1366×398)</text>"))
        #expect(svg.contains(">step 2: layout mini-toolbar, keyboard (519, 969, 328×55), hardware keyboard</text>"))
        #expect(svg.contains(">toolbar (6 buttons)</text>"))
        #expect(svg.contains(">handle</text>"))
        // Two columns of 1366-point screens with 23-point margins.
        #expect(svg.contains(#"viewBox="0 0 2801 "#))
    }
}
