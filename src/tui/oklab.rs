//! Perceptual colour spaces for theme files: `oklch(L C H)` and `okhsl(H S L)` (pi 1.x's
//! theme colour forms) turned into 8-bit sRGB.
//!
//! OKLab is Björn Ottosson's perceptual space; OKLCH is its polar form. An OKLCH colour
//! outside sRGB keeps its lightness and hue and loses chroma until it fits (a bisection, as
//! CSS gamut mapping does). OKHSL is Ottosson's hue/saturation/lightness built on OKLab,
//! where saturation is relative to the most the sRGB gamut allows at that hue and
//! lightness, so every value is in gamut. Constants are the published ones, at the
//! precision pi uses, so the same file gives the same colours in both.

/// OKLab (L, a, b) to cone responses (before the cube).
const LAB_TO_LMS: [[f64; 3]; 3] = [
    [1.0, 0.396_337_777_376_174_9, 0.215_803_757_309_913_6],
    [1.0, -0.105_561_345_815_658_6, -0.063_854_172_825_813_3],
    [1.0, -0.089_484_177_529_811_9, -1.291_485_548_019_409_2],
];

/// Cubed cone responses to linear sRGB.
const LMS_TO_LINEAR_SRGB: [[f64; 3]; 3] = [
    [
        4.076_741_636_075_958,
        -3.307_711_539_258_063,
        0.230_969_903_182_104_3,
    ],
    [
        -1.268_437_973_285_031_5,
        2.609_757_349_287_688,
        -0.341_319_376_002_657,
    ],
    [
        -0.004_196_076_138_675_6,
        -0.703_418_617_935_936_2,
        1.707_614_694_074_611_7,
    ],
];

/// Ottosson's polynomial fit of the maximum saturation per hue: for each sRGB channel that
/// clips first, the half-plane test `x·a + y·b > 1` and the fit's coefficients. The last
/// entry (blue) applies when neither earlier test holds.
const SATURATION_FIT: [([f64; 2], [f64; 5]); 3] = [
    (
        [-1.881_703_1, -0.809_365_01],
        [
            1.190_862_77,
            1.765_767_28,
            0.596_626_41,
            0.755_151_97,
            0.567_712_45,
        ],
    ),
    (
        [1.814_440_8, -1.194_452_67],
        [
            0.739_565_15,
            -0.459_544_04,
            0.082_854_27,
            0.125_410_73,
            -0.145_032_04,
        ],
    ),
    (
        [0.131_107_58, 1.813_339_71],
        [
            1.357_336_52,
            -0.009_157_99,
            -1.151_302_1,
            -0.505_596_06,
            0.006_921_67,
        ],
    ),
];

/// The toe that maps OKLab lightness to OKHSL's (closer to CIELab's perceived lightness).
const TOE_K1: f64 = 0.206;
const TOE_K2: f64 = 0.03;
const TOE_K3: f64 = (1.0 + TOE_K1) / (1.0 + TOE_K2);

/// `oklch(l c h)` with `l` in 0..=1, `c` ≥ 0 and `h` in degrees, gamut-mapped to sRGB.
pub fn oklch_to_rgb(l: f64, c: f64, h: f64) -> (u8, u8, u8) {
    let (sin, cos) = h.to_radians().sin_cos();
    let at_chroma = |chroma: f64| oklab_to_linear_srgb([l, chroma * cos, chroma * sin]);
    let direct = at_chroma(c);
    if in_gamut(direct) {
        return linear_srgb_to_rgb(direct);
    }
    let (mut low, mut high, mut best) = (0.0, c, at_chroma(0.0));
    for _ in 0..20 {
        let chroma = (low + high) / 2.0;
        let candidate = at_chroma(chroma);
        if in_gamut(candidate) {
            low = chroma;
            best = candidate;
        } else {
            high = chroma;
        }
    }
    linear_srgb_to_rgb(best)
}

/// `okhsl(h s l)` with `h` in degrees and `s`, `l` in 0..=1.
pub fn okhsl_to_rgb(h: f64, s: f64, l: f64) -> (u8, u8, u8) {
    let lightness = toe_inverse(l);
    let mut lab = [lightness, 0.0, 0.0];
    if lightness > 0.0 && lightness < 1.0 && s > 0.0 {
        let (b, a) = h.rem_euclid(360.0).to_radians().sin_cos();
        let [c0, c_mid, c_max] = chroma_stops(lightness, a, b);
        let chroma = if s < 0.8 {
            let t = 1.25 * s;
            let k1 = 0.8 * c0;
            t * k1 / (1.0 - (1.0 - k1 / c_mid) * t)
        } else {
            let t = 5.0 * (s - 0.8);
            let k1 = 0.2 * c_mid * c_mid * 1.25 * 1.25 / c0;
            c_mid + t * k1 / (1.0 - (1.0 - k1 / (c_max - c_mid)) * t)
        };
        lab = [lightness, chroma * a, chroma * b];
    }
    linear_srgb_to_rgb(oklab_to_linear_srgb(lab))
}

fn toe_inverse(x: f64) -> f64 {
    (x * x + TOE_K1 * x) / (TOE_K3 * (x + TOE_K2))
}

fn oklab_to_linear_srgb(lab: [f64; 3]) -> [f64; 3] {
    let lms = LAB_TO_LMS.map(|row| dot(row, lab).powi(3));
    LMS_TO_LINEAR_SRGB.map(|row| dot(row, lms))
}

fn dot(row: [f64; 3], v: [f64; 3]) -> f64 {
    row[0] * v[0] + row[1] * v[1] + row[2] * v[2]
}

fn in_gamut(linear: [f64; 3]) -> bool {
    linear.iter().all(|c| (-1e-7..=1.0 + 1e-7).contains(c))
}

fn linear_srgb_to_rgb(linear: [f64; 3]) -> (u8, u8, u8) {
    let encode = |v: f64| {
        let gamma = if v > 0.003_130_8 {
            1.055 * v.powf(1.0 / 2.4) - 0.055
        } else {
            12.92 * v
        };
        (gamma.clamp(0.0, 1.0) * 255.0).round() as u8
    };
    (encode(linear[0]), encode(linear[1]), encode(linear[2]))
}

/// How each cone response changes along the hue direction (a, b) at unit chroma.
fn lms_slopes(a: f64, b: f64) -> [f64; 3] {
    LAB_TO_LMS.map(|row| row[1] * a + row[2] * b)
}

/// The largest saturation (chroma / lightness) in gamut for the hue (a, b), a unit vector:
/// the polynomial fit refined by one Halley step on the channel that clips first.
fn max_saturation(a: f64, b: f64) -> f64 {
    let channel = SATURATION_FIT
        .iter()
        .position(|([x, y], _)| x * a + y * b > 1.0)
        .unwrap_or(2);
    let [k0, k1, k2, k3, k4] = SATURATION_FIT[channel].1;
    let weights = LMS_TO_LINEAR_SRGB[channel];
    let s = k0 + k1 * a + k2 * b + k3 * a * a + k4 * a * b;
    let slopes = lms_slopes(a, b);
    let base = slopes.map(|k| 1.0 + s * k);
    let f = dot(weights, base.map(|v| v.powi(3)));
    let f1 = dot(
        weights,
        [0, 1, 2].map(|i| 3.0 * slopes[i] * base[i] * base[i]),
    );
    let f2 = dot(
        weights,
        [0, 1, 2].map(|i| 6.0 * slopes[i] * slopes[i] * base[i]),
    );
    s - f * f1 / (f1 * f1 - 0.5 * f * f2)
}

/// The most chromatic colour of a hue: (lightness, chroma).
fn cusp(a: f64, b: f64) -> (f64, f64) {
    let s = max_saturation(a, b);
    let rgb = oklab_to_linear_srgb([1.0, s * a, s * b]);
    let l = (1.0 / rgb[0].max(rgb[1]).max(rgb[2])).cbrt();
    (l, l * s)
}

/// The largest chroma in gamut at `lightness` for the hue (a, b).
fn max_chroma(a: f64, b: f64, lightness: f64, (cusp_l, cusp_c): (f64, f64)) -> f64 {
    if lightness <= cusp_l {
        return cusp_c * lightness / cusp_l;
    }
    let t = cusp_c * (lightness - 1.0) / (cusp_l - 1.0);
    let slopes = lms_slopes(a, b);
    let lms = slopes.map(|k| lightness + t * k);
    let cubes = lms.map(|v| v.powi(3));
    let first = [0, 1, 2].map(|i| 3.0 * slopes[i] * lms[i] * lms[i]);
    let second = [0, 1, 2].map(|i| 6.0 * slopes[i] * slopes[i] * lms[i]);
    let step = LMS_TO_LINEAR_SRGB
        .iter()
        .map(|row| {
            let f = dot(*row, cubes) - 1.0;
            let f1 = dot(*row, first);
            let f2 = dot(*row, second);
            let u = f1 / (f1 * f1 - 0.5 * f * f2);
            if u >= 0.0 {
                -f * u
            } else {
                f64::MAX
            }
        })
        .fold(f64::MAX, f64::min);
    t + step
}

/// OKHSL's three reference chromas at a lightness and hue: the low, mid and maximum.
fn chroma_stops(lightness: f64, a: f64, b: f64) -> [f64; 3] {
    let peak = cusp(a, b);
    let c_max = max_chroma(a, b, lightness, peak);
    let scale =
        c_max / (lightness * (peak.1 / peak.0)).min((1.0 - lightness) * (peak.1 / (1.0 - peak.0)));
    let mid_s = 0.115_169_93
        + 1.0
            / (7.447_789_7
                + 4.159_012_4 * b
                + a * (-2.195_573_47
                    + 1.751_984_01 * b
                    + a * (-2.137_049_48 - 10.023_010_43 * b
                        + a * (-4.248_945_61 + 5.387_708_19 * b + 4.698_910_13 * a))));
    let mid_t = 0.112_396_42
        + 1.0
            / (1.613_203_2 - 0.681_243_79 * b
                + a * (0.403_706_12
                    + 0.901_481_23 * b
                    + a * (-0.270_879_43
                        + 0.612_239_9 * b
                        + a * (0.002_992_15 - 0.453_995_68 * b - 0.146_618_72 * a))));
    let c_mid = 0.9
        * scale
        * (1.0 / (1.0 / (lightness * mid_s).powi(4) + 1.0 / ((1.0 - lightness) * mid_t).powi(4)))
            .sqrt()
            .sqrt();
    let c0 =
        (1.0 / (1.0 / (lightness * 0.4).powi(2) + 1.0 / ((1.0 - lightness) * 0.8).powi(2))).sqrt();
    [c0, c_mid, c_max]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn oklch_extremes_and_greys() {
        assert_eq!(oklch_to_rgb(0.0, 0.0, 0.0), (0, 0, 0));
        assert_eq!(oklch_to_rgb(1.0, 0.0, 0.0), (255, 255, 255));
        let (r, g, b) = oklch_to_rgb(0.6, 0.0, 123.0);
        assert!(
            r == g && g == b,
            "a zero-chroma colour is grey: {r} {g} {b}"
        );
    }

    #[test]
    fn colours_match_pi() {
        // pi 1.5.2's own conversions (its `colorToRgb(parseColor(...))`).
        assert_eq!(oklch_to_rgb(0.627_955, 0.257_683, 29.233_885), (255, 0, 0));
        assert_eq!(oklch_to_rgb(0.7, 0.5, 145.0), (0, 191, 52), "gamut-mapped");
        assert_eq!(oklch_to_rgb(0.62, 0.1, 200.0), (28, 152, 158));
        assert_eq!(okhsl_to_rgb(29.233_885, 1.0, 0.568_085), (255, 0, 0));
        assert_eq!(okhsl_to_rgb(234.0, 0.03, 0.89), (222, 224, 225));
        assert_eq!(okhsl_to_rgb(20.0, 0.72, 0.67), (234, 127, 129));
        assert_eq!(okhsl_to_rgb(233.0, 0.41, 0.24), (33, 59, 73));
        assert_eq!(okhsl_to_rgb(250.0, 0.6, 0.55), (78, 136, 194));
    }

    #[test]
    fn okhsl_extremes_and_greys() {
        assert_eq!(okhsl_to_rgb(0.0, 0.0, 0.0), (0, 0, 0));
        assert_eq!(okhsl_to_rgb(200.0, 1.0, 1.0), (255, 255, 255));
        let (r, g, b) = okhsl_to_rgb(77.0, 0.0, 0.5);
        assert!(r == g && g == b, "zero saturation is grey: {r} {g} {b}");
    }
}
