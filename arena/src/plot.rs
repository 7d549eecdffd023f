//! A PNG plot of Elo against training step, drawn by a tiny rasteriser with a built-in
//! 5x7 bitmap font (no system fonts, no font library), written with the `png` crate.

use std::io::BufWriter;
use std::path::Path;

type Rgb = [u8; 3];

const WHITE: Rgb = [255, 255, 255];
const BLACK: Rgb = [0, 0, 0];
const GRID: Rgb = [225, 225, 225];
const BLUE: Rgb = [31, 119, 180];
const LIGHT_BLUE: Rgb = [150, 190, 225];

/// An RGB image.
pub struct Canvas {
    pub width: usize,
    pub height: usize,
    pub pixels: Vec<u8>,
}

/// Classic 5x7 font, column-major, bit 0 at the top.
fn glyph(c: char) -> [u8; 5] {
    match c.to_ascii_uppercase() {
        '0' => [0x3E, 0x51, 0x49, 0x45, 0x3E],
        '1' => [0x00, 0x42, 0x7F, 0x40, 0x00],
        '2' => [0x42, 0x61, 0x51, 0x49, 0x46],
        '3' => [0x21, 0x41, 0x45, 0x4B, 0x31],
        '4' => [0x18, 0x14, 0x12, 0x7F, 0x10],
        '5' => [0x27, 0x45, 0x45, 0x45, 0x39],
        '6' => [0x3C, 0x4A, 0x49, 0x49, 0x30],
        '7' => [0x01, 0x71, 0x09, 0x05, 0x03],
        '8' => [0x36, 0x49, 0x49, 0x49, 0x36],
        '9' => [0x06, 0x49, 0x49, 0x29, 0x1E],
        'A' => [0x7E, 0x11, 0x11, 0x11, 0x7E],
        'B' => [0x7F, 0x49, 0x49, 0x49, 0x36],
        'C' => [0x3E, 0x41, 0x41, 0x41, 0x22],
        'D' => [0x7F, 0x41, 0x41, 0x22, 0x1C],
        'E' => [0x7F, 0x49, 0x49, 0x49, 0x41],
        'F' => [0x7F, 0x09, 0x09, 0x09, 0x01],
        'G' => [0x3E, 0x41, 0x49, 0x49, 0x7A],
        'H' => [0x7F, 0x08, 0x08, 0x08, 0x7F],
        'I' => [0x00, 0x41, 0x7F, 0x41, 0x00],
        'J' => [0x20, 0x40, 0x41, 0x3F, 0x01],
        'K' => [0x7F, 0x08, 0x14, 0x22, 0x41],
        'L' => [0x7F, 0x40, 0x40, 0x40, 0x40],
        'M' => [0x7F, 0x02, 0x0C, 0x02, 0x7F],
        'N' => [0x7F, 0x04, 0x08, 0x10, 0x7F],
        'O' => [0x3E, 0x41, 0x41, 0x41, 0x3E],
        'P' => [0x7F, 0x09, 0x09, 0x09, 0x06],
        'Q' => [0x3E, 0x41, 0x51, 0x21, 0x5E],
        'R' => [0x7F, 0x09, 0x19, 0x29, 0x46],
        'S' => [0x46, 0x49, 0x49, 0x49, 0x31],
        'T' => [0x01, 0x01, 0x7F, 0x01, 0x01],
        'U' => [0x3F, 0x40, 0x40, 0x40, 0x3F],
        'V' => [0x1F, 0x20, 0x40, 0x20, 0x1F],
        'W' => [0x3F, 0x40, 0x38, 0x40, 0x3F],
        'X' => [0x63, 0x14, 0x08, 0x14, 0x63],
        'Y' => [0x07, 0x08, 0x70, 0x08, 0x07],
        'Z' => [0x61, 0x51, 0x49, 0x45, 0x43],
        '-' => [0x08, 0x08, 0x08, 0x08, 0x08],
        '+' => [0x08, 0x08, 0x3E, 0x08, 0x08],
        '.' => [0x00, 0x60, 0x60, 0x00, 0x00],
        ',' => [0x00, 0x50, 0x30, 0x00, 0x00],
        ':' => [0x00, 0x36, 0x36, 0x00, 0x00],
        '(' => [0x00, 0x1C, 0x22, 0x41, 0x00],
        ')' => [0x00, 0x41, 0x22, 0x1C, 0x00],
        '%' => [0x23, 0x13, 0x08, 0x64, 0x62],
        '/' => [0x20, 0x10, 0x08, 0x04, 0x02],
        '=' => [0x14, 0x14, 0x14, 0x14, 0x14],
        _ => [0; 5],
    }
}

impl Canvas {
    pub fn new(width: usize, height: usize) -> Canvas {
        Canvas { width, height, pixels: WHITE.repeat(width * height) }
    }

    pub fn set(&mut self, x: i64, y: i64, c: Rgb) {
        if x >= 0 && y >= 0 && (x as usize) < self.width && (y as usize) < self.height {
            let i = 3 * (y as usize * self.width + x as usize);
            self.pixels[i..i + 3].copy_from_slice(&c);
        }
    }

    pub fn get(&self, x: usize, y: usize) -> Rgb {
        let i = 3 * (y * self.width + x);
        [self.pixels[i], self.pixels[i + 1], self.pixels[i + 2]]
    }

    pub fn rect(&mut self, x0: i64, y0: i64, x1: i64, y1: i64, c: Rgb) {
        for y in y0.min(y1)..=y0.max(y1) {
            for x in x0.min(x1)..=x0.max(x1) {
                self.set(x, y, c);
            }
        }
    }

    /// A line `width` pixels thick (Bresenham with a square pen).
    pub fn line(&mut self, (x0, y0): (i64, i64), (x1, y1): (i64, i64), width: i64, c: Rgb) {
        let (dx, dy) = ((x1 - x0).abs(), -(y1 - y0).abs());
        let (sx, sy) = (if x0 < x1 { 1 } else { -1 }, if y0 < y1 { 1 } else { -1 });
        let (mut x, mut y, mut err) = (x0, y0, dx + dy);
        let h = width / 2;
        loop {
            self.rect(x - h, y - h, x - h + width - 1, y - h + width - 1, c);
            if x == x1 && y == y1 {
                break;
            }
            let e2 = 2 * err;
            if e2 >= dy {
                err += dy;
                x += sx;
            }
            if e2 <= dx {
                err += dx;
                y += sy;
            }
        }
    }

    pub fn disc(&mut self, cx: i64, cy: i64, r: i64, c: Rgb) {
        for y in -r..=r {
            for x in -r..=r {
                if x * x + y * y <= r * r {
                    self.set(cx + x, cy + y, c);
                }
            }
        }
    }

    /// Text at (x, y) (top left), each font pixel `scale` pixels.
    pub fn text(&mut self, x: i64, y: i64, s: &str, scale: i64, c: Rgb) {
        for (k, ch) in s.chars().enumerate() {
            let g = glyph(ch);
            let ox = x + k as i64 * 6 * scale;
            for (col, bits) in g.iter().enumerate() {
                for row in 0..7 {
                    if bits >> row & 1 == 1 {
                        self.rect(
                            ox + col as i64 * scale,
                            y + row * scale,
                            ox + (col as i64 + 1) * scale - 1,
                            y + (row + 1) * scale - 1,
                            c,
                        );
                    }
                }
            }
        }
    }

    pub fn text_width(s: &str, scale: i64) -> i64 {
        (s.chars().count() as i64 * 6 - 1).max(0) * scale
    }

    pub fn write_png(&self, path: &Path) -> std::io::Result<()> {
        let file = std::fs::File::create(path)?;
        let mut enc = png::Encoder::new(BufWriter::new(file), self.width as u32, self.height as u32);
        enc.set_color(png::ColorType::Rgb);
        enc.set_depth(png::BitDepth::Eight);
        let mut w = enc.write_header().map_err(std::io::Error::other)?;
        w.write_image_data(&self.pixels).map_err(std::io::Error::other)?;
        w.finish().map_err(std::io::Error::other)
    }
}

/// About five round tick values covering [lo, hi].
pub fn ticks(lo: f64, hi: f64) -> Vec<f64> {
    let span = (hi - lo).max(1e-9);
    let raw = span / 5.0;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0].iter().map(|m| m * mag).find(|s| *s >= raw).unwrap_or(10.0 * mag);
    let mut t = (lo / step).ceil() * step;
    let mut out = Vec::new();
    while t <= hi + step * 1e-9 {
        out.push(if t.abs() < step * 1e-9 { 0.0 } else { t });
        t += step;
    }
    out
}

fn tick_label(v: f64) -> String {
    if v.abs() >= 10_000.0 && (v / 1000.0).fract() == 0.0 {
        format!("{}K", (v / 1000.0) as i64)
    } else if v.fract() == 0.0 {
        format!("{}", v as i64)
    } else {
        format!("{v:.1}")
    }
}

/// Plots (step, elo, error) points, sorted by step, with error bars, to a PNG.
/// Infinite values are clipped to the plotted range.
pub fn plot_elo(points: &[(u64, f64, f64)], path: &Path) -> std::io::Result<()> {
    let (w, h) = (800usize, 500usize);
    let mut c = Canvas::new(w, h);
    let (left, right, top, bottom) = (90i64, 30i64, 50i64, 70i64);
    let (pw, ph) = (w as i64 - left - right, h as i64 - top - bottom);
    let mut pts: Vec<(u64, f64, f64)> = points.to_vec();
    pts.sort_by_key(|p| p.0);
    let finite: Vec<f64> = pts.iter().map(|p| p.1).filter(|e| e.is_finite()).collect();
    let (mut ymin, mut ymax) =
        finite.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &e| (a.min(e), b.max(e)));
    if !ymin.is_finite() {
        (ymin, ymax) = (-100.0, 100.0);
    }
    for p in &pts {
        if p.1.is_finite() && p.2.is_finite() {
            ymin = ymin.min(p.1 - p.2);
            ymax = ymax.max(p.1 + p.2);
        }
    }
    let pad = ((ymax - ymin) * 0.08).max(10.0);
    let (ymin, ymax) = (ymin - pad, ymax + pad);
    let xmin = pts.first().map_or(0.0, |p| p.0 as f64);
    let mut xmax = pts.last().map_or(1.0, |p| p.0 as f64);
    if xmax <= xmin {
        xmax = xmin + 1.0;
    }
    let xpad = (xmax - xmin) * 0.05;
    let (xmin, xmax) = (xmin - xpad, xmax + xpad);
    let px = |x: f64| left + ((x - xmin) / (xmax - xmin) * pw as f64).round() as i64;
    let py = |y: f64| top + ph - ((y.clamp(ymin, ymax) - ymin) / (ymax - ymin) * ph as f64).round() as i64;

    for t in ticks(ymin, ymax) {
        let y = py(t);
        c.line((left, y), (left + pw, y), 1, GRID);
        let l = tick_label(t);
        c.text(left - 8 - Canvas::text_width(&l, 2), y - 7, &l, 2, BLACK);
    }
    for t in ticks(xmin.max(0.0), xmax) {
        let x = px(t);
        c.line((x, top), (x, top + ph), 1, GRID);
        let l = tick_label(t);
        c.text(x - Canvas::text_width(&l, 2) / 2, top + ph + 10, &l, 2, BLACK);
    }
    c.line((left, top), (left, top + ph), 2, BLACK);
    c.line((left, top + ph), (left + pw, top + ph), 2, BLACK);
    let title = "ELO VS TRAINING STEP";
    c.text(left + pw / 2 - Canvas::text_width(title, 3) / 2, 12, title, 3, BLACK);
    let xl = "TRAINING STEP";
    c.text(left + pw / 2 - Canvas::text_width(xl, 2) / 2, h as i64 - 28, xl, 2, BLACK);
    c.text(10, top - 28, "ELO", 2, BLACK);

    for p in &pts {
        if p.1.is_finite() && p.2.is_finite() {
            let x = px(p.0 as f64);
            c.line((x, py(p.1 - p.2)), (x, py(p.1 + p.2)), 2, LIGHT_BLUE);
            c.line((x - 5, py(p.1 - p.2)), (x + 5, py(p.1 - p.2)), 2, LIGHT_BLUE);
            c.line((x - 5, py(p.1 + p.2)), (x + 5, py(p.1 + p.2)), 2, LIGHT_BLUE);
        }
    }
    let y_of = |e: f64| {
        if e.is_finite() {
            e
        } else if e > 0.0 {
            ymax
        } else {
            ymin
        }
    };
    for pair in pts.windows(2) {
        c.line((px(pair[0].0 as f64), py(y_of(pair[0].1))), (px(pair[1].0 as f64), py(y_of(pair[1].1))), 3, BLUE);
    }
    for p in &pts {
        c.disc(px(p.0 as f64), py(y_of(p.1)), 5, BLUE);
    }
    c.write_png(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_round() {
        assert_eq!(ticks(0.0, 100.0), vec![0.0, 20.0, 40.0, 60.0, 80.0, 100.0]);
        assert_eq!(ticks(-130.0, 260.0), vec![-100.0, 0.0, 100.0, 200.0]);
    }

    #[test]
    fn plot_writes_a_png() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("elo.png");
        plot_elo(
            &[(1000, -200.0, 60.0), (2000, 0.0, 50.0), (4000, 150.0, 70.0), (8000, f64::INFINITY, f64::INFINITY)],
            &p,
        )
        .unwrap();
        let bytes = std::fs::read(&p).unwrap();
        assert_eq!(&bytes[1..4], b"PNG");
        let dec = png::Decoder::new(std::fs::File::open(&p).unwrap());
        let reader = dec.read_info().unwrap();
        assert_eq!((reader.info().width, reader.info().height), (800, 500));
    }
}
