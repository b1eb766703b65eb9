//! One hand-written SVG chart per fan-out: grouped bars of delivered msgs/s (median over
//! rounds) per cell, one bar per target, with a min–max whisker; a linear axis from 0.

use std::fmt::Write;

use super::aggregate::Row;
use super::markdown::si;

/// Chart size in SVG user units (pixels when shown as is).
const WIDTH: f64 = 960.0;
const HEIGHT: f64 = 440.0;
/// Room around the plot for the title, axis labels and cell labels.
const LEFT: f64 = 80.0;
const RIGHT: f64 = 20.0;
const TOP: f64 = 60.0;
const BOTTOM: f64 = 70.0;
/// Horizontal grid lines above the axis.
const GRID_LINES: usize = 5;
/// Bar colours, by target (cycled past four targets).
const COLOURS: [&str; 4] = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759"];

/// The chart of the cells with `fanout` subscribers.
pub fn render(fanout: usize, labels: &[String], rows: &[Row]) -> String {
    let rows: Vec<&Row> = rows.iter().filter(|r| r.cell.fanout == fanout).collect();
    let top = rows
        .iter()
        .flat_map(|r| r.figures.iter())
        .filter_map(|f| f.per_sec.map(|s| s.max))
        .fold(0.0, f64::max);
    let axis_max = nice_ceiling(top);
    let plot_w = WIDTH - LEFT - RIGHT;
    let plot_h = HEIGHT - TOP - BOTTOM;
    let y = |value: f64| TOP + plot_h * (1.0 - value / axis_max);
    let mut svg = String::new();
    let _ = writeln!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(
        svg,
        r#"<rect width="{WIDTH}" height="{HEIGHT}" fill="white"/>"#
    );
    let _ = writeln!(
        svg,
        r#"<text x="{LEFT}" y="22" font-size="15" font-weight="bold">Delivered msgs/s, fan-out {fanout} (median over rounds; whiskers: min–max)</text>"#
    );
    for i in 0..=GRID_LINES {
        let value = axis_max * i as f64 / GRID_LINES as f64;
        let gy = y(value);
        let _ = writeln!(
            svg,
            r##"<line x1="{LEFT}" y1="{gy:.1}" x2="{:.1}" y2="{gy:.1}" stroke="#ddd"/><text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"##,
            WIDTH - RIGHT,
            LEFT - 6.0,
            gy + 4.0,
            si(value)
        );
    }
    let group_w = plot_w / rows.len().max(1) as f64;
    let bar_w = group_w * 0.7 / labels.len().max(1) as f64;
    for (g, row) in rows.iter().enumerate() {
        let gx = LEFT + group_w * g as f64 + group_w * 0.15;
        for (t, figures) in row.figures.iter().enumerate() {
            let x = gx + bar_w * t as f64;
            let colour = COLOURS[t % COLOURS.len()];
            let Some(spread) = figures.per_sec else {
                let _ = writeln!(
                    svg,
                    r#"<text x="{:.1}" y="{:.1}" text-anchor="middle" font-size="10">failed</text>"#,
                    x + bar_w / 2.0,
                    y(0.0) - 4.0
                );
                continue;
            };
            let top = y(spread.median);
            let _ = writeln!(
                svg,
                r#"<rect x="{x:.1}" y="{top:.1}" width="{:.1}" height="{:.1}" fill="{colour}"><title>{}: {} msgs/s</title></rect>"#,
                bar_w - 2.0,
                y(0.0) - top,
                escape(&labels[t]),
                si(spread.median)
            );
            let mid = x + bar_w / 2.0 - 1.0;
            let _ = writeln!(
                svg,
                r#"<line x1="{mid:.1}" y1="{:.1}" x2="{mid:.1}" y2="{:.1}" stroke="black"/>"#,
                y(spread.min),
                y(spread.max)
            );
        }
        let cx = LEFT + group_w * (g as f64 + 0.5);
        let payload = if row.cell.payload_bytes == 0 {
            "0 B (count)".to_owned()
        } else {
            format!("{} B", row.cell.payload_bytes)
        };
        let _ = writeln!(
            svg,
            r#"<text x="{cx:.1}" y="{:.1}" text-anchor="middle">{payload}</text><text x="{cx:.1}" y="{:.1}" text-anchor="middle">batch {}</text>"#,
            y(0.0) + 18.0,
            y(0.0) + 34.0,
            row.cell.batch
        );
    }
    for (t, label) in labels.iter().enumerate() {
        let lx = WIDTH - RIGHT - 120.0 * (labels.len() - t) as f64;
        let _ = writeln!(
            svg,
            r#"<rect x="{lx:.1}" y="34" width="12" height="12" fill="{}"/><text x="{:.1}" y="45">{}</text>"#,
            COLOURS[t % COLOURS.len()],
            lx + 16.0,
            escape(label)
        );
    }
    svg.push_str("</svg>\n");
    svg
}

/// The smallest 1, 2, 2.5 or 5 times a power of ten at or above `value` (1 for 0).
fn nice_ceiling(value: f64) -> f64 {
    if value <= 0.0 || !value.is_finite() {
        return 1.0;
    }
    let power = 10f64.powf(value.log10().floor());
    [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|step| step * power)
        .find(|&candidate| candidate >= value)
        .unwrap_or(10.0 * power)
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::super::aggregate::tests::{run, summary};
    use super::super::aggregate::{Cell, table};
    use super::*;

    #[test]
    fn axis_tops_are_round_numbers() {
        assert_eq!(nice_ceiling(0.0), 1.0);
        assert_eq!(nice_ceiling(1.0), 1.0);
        assert_eq!(nice_ceiling(1.3e6), 2e6);
        assert_eq!(nice_ceiling(2.2e5), 2.5e5);
        assert_eq!(nice_ceiling(4.9), 5.0);
        assert_eq!(nice_ceiling(7.0e3), 1e4);
    }

    #[test]
    fn a_chart_has_a_bar_per_target_and_cell_of_its_fanout() {
        let cells = [1, 10].map(|fanout| Cell {
            fanout,
            payload_bytes: 256,
            batch: 64,
        });
        let runs = vec![
            run(cells[0], 0, 0, Ok(summary(2000.0, 0, Some(5.0)))),
            run(cells[0], 1, 0, Ok(summary(1000.0, 0, Some(5.0)))),
            run(cells[1], 0, 0, Ok(summary(9000.0, 0, Some(5.0)))),
            run(cells[1], 1, 0, Err("timed out".to_owned())),
        ];
        let labels = ["quiver", "n<a>ts"].map(str::to_owned);
        let rows = table(&labels, &cells, &runs);
        let one = render(1, &labels, &rows);
        assert!(one.starts_with("<svg"), "{one}");
        assert!(one.trim_end().ends_with("</svg>"));
        assert_eq!(one.matches("<title>").count(), 2, "{one}");
        assert!(one.contains("n&lt;a&gt;ts"), "{one}");
        let ten = render(10, &labels, &rows);
        assert_eq!(ten.matches("<title>").count(), 1, "{ten}");
        assert!(ten.contains(">failed<"), "{ten}");
    }
}
