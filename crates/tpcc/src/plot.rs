//! Two small charts beyond [`crate::Report::svg`], for `waterline lab`: lines over a numeric
//! x axis (throughput as ORDER_LINE grows) and grouped bars (followers by wake-ups).

use std::io;
use std::path::Path;

use plotters::coord::Shift;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;

/// A chart over `root` with `f64` axes (for a category chart, x holds the categories at 0, 1,
/// 2, ...).
pub(crate) type Chart<'a, 'b> =
    ChartContext<'a, SVGBackend<'b>, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

/// Builds a [`Chart`] whose x axis holds `categories` at 0, 1, 2, ..., with its caption, axes
/// and mesh drawn.
pub(crate) fn category_chart<'a, 'b>(
    root: &'a DrawingArea<SVGBackend<'b>, Shift>,
    labels: Labels<'_>,
    categories: &[String],
    top: f64,
) -> Result<Chart<'a, 'b>, Box<dyn std::error::Error>> {
    let mut chart = ChartBuilder::on(root)
        .caption(labels.caption, ("sans-serif", 20))
        .margin(15)
        .x_label_area_size(45)
        .y_label_area_size(80)
        .build_cartesian_2d(-0.5f64..(categories.len() as f64 - 0.5), 0f64..top)?;
    let label = |x: &f64| {
        let i = x.round();
        if (x - i).abs() < 1e-6 && i >= 0.0 && (i as usize) < categories.len() {
            categories[i as usize].clone()
        } else {
            String::new()
        }
    };
    chart
        .configure_mesh()
        .x_labels(categories.len() * 2 + 1)
        .x_label_formatter(&label)
        .x_desc(labels.x)
        .y_desc(labels.y)
        .draw()?;
    Ok(chart)
}

/// Named series of `(x, y)` points.
pub type Series = (String, Vec<(f64, f64)>);

/// Labels of a chart: its caption and its axes.
#[derive(Clone, Copy, Debug)]
pub struct Labels<'a> {
    /// Above the chart.
    pub caption: &'a str,
    /// Under the x axis.
    pub x: &'a str,
    /// Beside the y axis.
    pub y: &'a str,
}

fn top_of(values: impl Iterator<Item = f64>) -> f64 {
    values.fold(1.0, f64::max) * 1.15
}

fn to_io(e: Box<dyn std::error::Error>) -> io::Error {
    io::Error::other(e.to_string())
}

/// Draws series `i`, `name`, as a line through `points` with each point marked, and adds it to
/// the legend.
pub(crate) fn draw_line<'a, 'b: 'a>(
    chart: &mut Chart<'a, 'b>,
    i: usize,
    name: &str,
    points: &[(f64, f64)],
) -> Result<(), Box<dyn std::error::Error>> {
    let color = Palette99::pick(i).to_rgba();
    chart
        .draw_series(LineSeries::new(points.to_vec(), color.stroke_width(2)))?
        .label(name)
        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2)));
    chart.draw_series(points.iter().map(|&p| Circle::new(p, 4, color.filled())))?;
    Ok(())
}

/// Draws the legend at `position`.
pub(crate) fn draw_legend<'a, 'b: 'a>(
    chart: &mut Chart<'a, 'b>,
    position: SeriesLabelPosition,
) -> Result<(), Box<dyn std::error::Error>> {
    chart
        .configure_series_labels()
        .position(position)
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK)
        .draw()?;
    Ok(())
}

/// One line (with its points marked) per series, as SVG.
pub fn lines(path: &Path, labels: Labels<'_>, series: &[Series]) -> io::Result<()> {
    let points = || series.iter().flat_map(|(_, p)| p.iter().copied());
    let (lo, hi) = points().fold((f64::MAX, f64::MIN), |(lo, hi), (x, _)| {
        (lo.min(x), hi.max(x))
    });
    let (lo, hi) = if lo > hi { (0.0, 1.0) } else { (lo, hi) };
    let pad = ((hi - lo) * 0.05).max(0.5);
    let top = top_of(points().map(|(_, y)| y));
    let plot = || -> Result<(), Box<dyn std::error::Error>> {
        let root = SVGBackend::new(path, (900, 540)).into_drawing_area();
        root.fill(&WHITE)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(labels.caption, ("sans-serif", 20))
            .margin(15)
            .x_label_area_size(45)
            .y_label_area_size(80)
            .build_cartesian_2d((lo - pad)..(hi + pad), 0f64..top)?;
        chart
            .configure_mesh()
            .x_desc(labels.x)
            .y_desc(labels.y)
            .draw()?;
        for (i, (name, points)) in series.iter().enumerate() {
            draw_line(&mut chart, i, name, points)?;
        }
        draw_legend(&mut chart, SeriesLabelPosition::LowerRight)?;
        root.present()?;
        Ok(())
    };
    plot().map_err(to_io)
}

/// Grouped bars: for each category (x), one bar per series, as SVG. `series[i].1[j]` is
/// series `i`'s value in category `j`.
pub fn bars(
    path: &Path,
    labels: Labels<'_>,
    categories: &[String],
    series: &[(String, Vec<f64>)],
) -> io::Result<()> {
    let top = top_of(series.iter().flat_map(|(_, v)| v.iter().copied()));
    let width = 0.8 / series.len().max(1) as f64;
    let plot = || -> Result<(), Box<dyn std::error::Error>> {
        let root = SVGBackend::new(path, (900, 540)).into_drawing_area();
        root.fill(&WHITE)?;
        let mut chart = category_chart(&root, labels, categories, top)?;
        for (i, (name, values)) in series.iter().enumerate() {
            let color = Palette99::pick(i).to_rgba();
            let left = |j: usize| j as f64 - 0.4 + i as f64 * width;
            chart
                .draw_series(values.iter().enumerate().map(|(j, &v)| {
                    Rectangle::new([(left(j), 0.0), (left(j) + width, v)], color.filled())
                }))?
                .label(name.as_str())
                .legend(move |(x, y)| {
                    Rectangle::new([(x, y - 5), (x + 15, y + 5)], color.filled())
                });
        }
        draw_legend(&mut chart, SeriesLabelPosition::UpperRight)?;
        root.present()?;
        Ok(())
    };
    plot().map_err(to_io)
}
