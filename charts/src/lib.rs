//! Line charts, PNG or SVG by the file's extension ([`write_chart`]), drawn with
//! `plotters` in the DejaVu Sans font (embedded by the `dejavu` crate, so that no system
//! font is needed): lines of points with error bars over horizontal reference levels. koma
//! draws Elo against training step with them: the arena's series of checkpoints
//! (`elo.png` of a match) and the training run's rating on the baseline ladder (the
//! trainer's `elo.png`).

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// A chart: lines of points (with optional error bars) over horizontal reference
/// levels (the rungs of a ladder).
#[derive(Clone, Debug, Default)]
pub struct Chart {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub series: Vec<Series>,
    /// (name, y) of horizontal lines drawn behind the series.
    pub levels: Vec<(String, f64)>,
}

/// One line of the chart.
#[derive(Clone, Debug, Default)]
pub struct Series {
    /// The legend's text; empty for no legend entry.
    pub name: String,
    pub points: Vec<Point>,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Point {
    pub x: f64,
    /// May be infinite (a clean sweep): drawn at the edge of the chart.
    pub y: f64,
    /// Half-width of the error bar.
    pub error: Option<f64>,
}

#[derive(Debug, thiserror::Error)]
pub enum ChartError {
    #[error("{path}: a plot is written as .png or .svg")]
    UnknownFormat { path: PathBuf },
    #[error("{path}: no points to plot")]
    NothingToPlot { path: PathBuf },
    #[error("drawing {path}: {message}")]
    Draw { path: PathBuf, message: String },
    #[error("writing {path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
}

/// Width and height of a chart, in pixels.
pub const SIZE: (u32, u32) = (900, 540);
/// Line colours, in order (blue, orange, green, red, purple).
const SERIES_COLORS: [RGBColor; 5] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
];
const FONT: &str = "sans-serif";

/// Registers the embedded font with plotters once.
fn register_font() {
    static DONE: OnceLock<()> = OnceLock::new();
    DONE.get_or_init(|| {
        // Both are valid TrueType files shipped inside the crate; a failure would only
        // leave text undrawn.
        let _ = plotters::style::register_font(FONT, FontStyle::Normal, dejavu::sans::regular());
        let _ = plotters::style::register_font(FONT, FontStyle::Bold, dejavu::sans::bold());
    });
}

/// Writes `chart` to `path` (`.png` or `.svg`), atomically.
pub fn write_chart(chart: &Chart, path: &Path) -> Result<(), ChartError> {
    if chart.series.iter().all(|s| s.points.is_empty()) {
        return Err(ChartError::NothingToPlot { path: path.to_path_buf() });
    }
    register_font();
    let draw_error = |message: String| ChartError::Draw { path: path.to_path_buf(), message };
    let io_error = |source| ChartError::Io { path: path.to_path_buf(), source };
    match path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase).as_deref() {
        Some("svg") => {
            let mut text = String::new();
            {
                let root = SVGBackend::with_string(&mut text, SIZE).into_drawing_area();
                draw(&root, chart).map_err(|e| draw_error(e.to_string()))?;
                root.present().map_err(|e| draw_error(e.to_string()))?;
            }
            files::write_atomic(path, text.as_bytes()).map_err(io_error)
        }
        Some("png") => {
            // plotters encodes by the file name: draw into a `.png` beside it, then rename.
            let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            let partial = path.with_file_name(format!(".{name}.partial.png"));
            {
                let root = BitMapBackend::new(&partial, SIZE).into_drawing_area();
                draw(&root, chart).map_err(|e| draw_error(e.to_string()))?;
                root.present().map_err(|e| draw_error(e.to_string()))?;
            }
            std::fs::rename(&partial, path).map_err(io_error)
        }
        _ => Err(ChartError::UnknownFormat { path: path.to_path_buf() }),
    }
}

/// The plotted ranges: every finite point with its error bar and every level, padded.
fn ranges(chart: &Chart) -> ((f64, f64), (f64, f64)) {
    let points = || chart.series.iter().flat_map(|s| s.points.iter());
    let (mut x0, mut x1) = (f64::INFINITY, f64::NEG_INFINITY);
    let (mut y0, mut y1) = (f64::INFINITY, f64::NEG_INFINITY);
    for p in points() {
        (x0, x1) = (x0.min(p.x), x1.max(p.x));
        if p.y.is_finite() {
            let e = p.error.filter(|e| e.is_finite()).unwrap_or(0.0);
            (y0, y1) = (y0.min(p.y - e), y1.max(p.y + e));
        }
    }
    for (_, y) in &chart.levels {
        (y0, y1) = (y0.min(*y), y1.max(*y));
    }
    if !y0.is_finite() {
        (y0, y1) = (-100.0, 100.0);
    }
    let ypad = ((y1 - y0) * 0.08).max(20.0);
    // At least 2% of the values and 10 either side: whole-numbered ticks, also around a
    // single point (a range of 2 at step 11462 labelled its fifths all "11462").
    let xpad = ((x1 - x0) * 0.04).max(0.02 * x0.abs().max(x1.abs())).max(10.0);
    ((x0 - xpad, x1 + xpad), (y0 - ypad, y1 + ypad))
}

fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    chart: &Chart,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    root.fill(&WHITE)?;
    let ((x0, x1), (y0, y1)) = ranges(chart);
    let mut area = ChartBuilder::on(root)
        .caption(&chart.title, (FONT, 24))
        .margin(16)
        .x_label_area_size(48)
        .y_label_area_size(64)
        .build_cartesian_2d(x0..x1, y0..y1)?;
    area.configure_mesh()
        .x_desc(&chart.x_label)
        .y_desc(&chart.y_label)
        .label_style((FONT, 14))
        .axis_desc_style((FONT, 16))
        .x_label_formatter(&|x| format!("{x:.0}"))
        .y_label_formatter(&|y| format!("{y:.0}"))
        .light_line_style(WHITE)
        .bold_line_style(BLACK.mix(0.08))
        .draw()?;

    // Levels: a grey line each, named at its right end (the legend sits at the left).
    let grey = RGBColor(110, 110, 110);
    let level_font = (FONT, 13).into_font().color(&grey).pos(Pos::new(HPos::Right, VPos::Bottom));
    for (name, y) in &chart.levels {
        area.draw_series(LineSeries::new([(x0, *y), (x1, *y)], grey.mix(0.6).stroke_width(1)))?;
        let label = format!("{name} {y:.0}");
        area.draw_series(std::iter::once(EmptyElement::at((x1, *y)) + Text::new(label, (-6, -3), level_font.clone())))?;
    }

    let clip = |y: f64| y.clamp(y0, y1);
    let mut legend = false;
    for (i, series) in chart.series.iter().enumerate() {
        let color = SERIES_COLORS[i % SERIES_COLORS.len()].to_rgba();
        let mut points = series.points.clone();
        points.sort_by(|a, b| a.x.total_cmp(&b.x));
        area.draw_series(points.iter().filter_map(|p| {
            let e = p.error.filter(|e| e.is_finite() && p.y.is_finite())?;
            Some(ErrorBar::new_vertical(p.x, clip(p.y - e), p.y, clip(p.y + e), color.mix(0.45).stroke_width(2), 8))
        }))?;
        let line = area.draw_series(LineSeries::new(points.iter().map(|p| (p.x, clip(p.y))), color.stroke_width(2)))?;
        if !series.name.is_empty() {
            legend = true;
            line.label(&series.name)
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2)));
        }
        area.draw_series(points.iter().map(|p| Circle::new((p.x, clip(p.y)), 4, color.filled())))?;
    }
    if legend {
        area.configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .label_font((FONT, 14))
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK.mix(0.3))
            .draw()?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Elo against step with error bars; the last point a sweep (infinite).
    fn chart() -> Chart {
        let points = [
            (1000.0, -200.0, 60.0),
            (2000.0, 0.0, 50.0),
            (4000.0, 150.0, 70.0),
            (8000.0, f64::INFINITY, f64::INFINITY),
        ];
        let series = Series {
            name: String::new(),
            points: points.iter().map(|&(x, y, error)| Point { x, y, error: Some(error) }).collect(),
        };
        Chart {
            title: "Elo against training step".into(),
            x_label: "training step".into(),
            y_label: "Elo".into(),
            series: vec![series],
            levels: Vec::new(),
        }
    }

    #[test]
    fn a_png_of_the_chart_size_with_ink_in_it() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("elo.png");
        write_chart(&chart(), &p).unwrap();
        let bytes = std::fs::read(&p).unwrap();
        assert_eq!(&bytes[1..4], b"PNG");
        // IHDR: width and height, big-endian, at bytes 16..24.
        let width = u32::from_be_bytes(bytes[16..20].try_into().unwrap());
        let height = u32::from_be_bytes(bytes[20..24].try_into().unwrap());
        assert_eq!((width, height), SIZE);
        assert!(bytes.len() > 10_000, "a drawn chart, not a blank image: {} bytes", bytes.len());
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names.len(), 1, "no partial file left: {names:?}");
    }

    #[test]
    fn an_svg_with_its_labels_as_text() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("elo.svg");
        let chart = Chart {
            title: "rating on the ladder".into(),
            x_label: "training step".into(),
            y_label: "Elo".into(),
            series: vec![Series {
                name: "network".into(),
                points: vec![Point { x: 0.0, y: 120.0, error: Some(80.0) }, Point { x: 500.0, y: 300.0, error: None }],
            }],
            levels: vec![("random".into(), 0.0), ("greedy".into(), 645.0)],
        };
        write_chart(&chart, &p).unwrap();
        let svg = std::fs::read_to_string(&p).unwrap();
        assert!(svg.starts_with("<svg"), "{}", &svg[..100.min(svg.len())]);
        for text in ["rating on the ladder", "training step", "network", "random 0", "greedy 645"] {
            assert!(svg.contains(text), "{text} missing");
        }
    }

    /// A single point still gets an x-axis of distinct whole-numbered ticks: its range is
    /// padded by 2% of the value and at least 10 either side.
    #[test]
    fn a_single_point_gets_a_readable_x_range() {
        let at = |x: f64| Chart {
            series: vec![Series { name: String::new(), points: vec![Point { x, y: 3000.0, error: None }] }],
            ..chart()
        };
        let ((x0, x1), _) = ranges(&at(11462.0));
        assert!(x0 < 11462.0 - 229.0 && x1 > 11462.0 + 229.0, "{x0}..{x1}");
        assert_eq!(ranges(&at(0.0)).0, (-10.0, 10.0));
    }

    #[test]
    fn other_formats_and_empty_charts_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        assert!(matches!(write_chart(&chart(), &dir.path().join("elo.gif")), Err(ChartError::UnknownFormat { .. })));
        let empty = Chart { series: vec![Series::default()], ..chart() };
        assert!(matches!(write_chart(&empty, &dir.path().join("elo.png")), Err(ChartError::NothingToPlot { .. })));
    }
}
