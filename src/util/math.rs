//! `ln`, `exp`, `powf`, `cbrt` and `sin_cos` for `f64` without the C maths library.
//!
//! Rust's `f64::ln`, `powf`, `cbrt` and `sin_cos` call glibc's `libm.so`; pi used nothing else from it, yet
//! loading it cost every process (even `pi --version`) a library mapping of ~330 KiB of
//! resident memory and its start-up work. These are the textbook reductions (a power of two
//! times a mantissa near 1 for `ln`, a multiple of ln 2 plus a small remainder for `exp`) with
//! series carried until their terms vanish: accurate to a few units in the last place, which
//! the callers (a BM25 ranking, sRGB and OKLab colour conversions to 8-bit channels) never
//! notice.

const LN2_HI: f64 = 6.931_471_803_691_238e-1;
const LN2_LO: f64 = 1.908_214_929_270_587_7e-10;

/// Natural logarithm. NaN for negative input and NaN, -inf for zero, +inf for +inf.
pub fn ln(x: f64) -> f64 {
    if x.is_nan() || x < 0.0 {
        return f64::NAN;
    }
    if x == 0.0 {
        return f64::NEG_INFINITY;
    }
    if x.is_infinite() {
        return x;
    }
    // x = m * 2^k with m in [sqrt(1/2), sqrt(2)).
    let (mut m, mut k) = frexp(x);
    if m < std::f64::consts::FRAC_1_SQRT_2 {
        m *= 2.0;
        k -= 1;
    }
    // ln(m) = 2 atanh(s), s = (m - 1) / (m + 1), |s| < 0.172: the odd series converges fast.
    let s = (m - 1.0) / (m + 1.0);
    let s2 = s * s;
    let mut term = s;
    let mut sum: f64 = 0.0;
    let mut n = 1.0;
    while term.abs() > f64::EPSILON * 1e-3 * sum.abs().max(f64::MIN_POSITIVE) {
        sum += term / n;
        term *= s2;
        n += 2.0;
    }
    let k = f64::from(k);
    k * LN2_HI + (2.0 * sum + k * LN2_LO)
}

/// e^x. Overflows to +inf, underflows to 0.
pub fn exp(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    if x > 709.8 {
        return f64::INFINITY;
    }
    if x < -745.2 {
        return 0.0;
    }
    // x = k ln 2 + r, |r| <= ln 2 / 2; e^r by its Taylor series.
    let k = (x / std::f64::consts::LN_2).round();
    let r = (x - k * LN2_HI) - k * LN2_LO;
    let mut term: f64 = 1.0;
    let mut sum = 1.0;
    let mut n = 1.0;
    while term.abs() > f64::EPSILON * 1e-3 {
        term *= r / n;
        sum += term;
        n += 1.0;
    }
    // Scale by 2^k in two steps so neither factor overflows or goes subnormal early.
    let k = k as i32;
    let half = k / 2;
    sum * pow2(half) * pow2(k - half)
}

/// x^y for x > 0 (the only use: no negative bases, which need integer-exponent rules).
pub fn powf(x: f64, y: f64) -> f64 {
    if y == 0.0 {
        return 1.0;
    }
    if x == 0.0 {
        return if y > 0.0 { 0.0 } else { f64::INFINITY };
    }
    exp(y * ln(x))
}

/// Cube root, for any sign.
pub fn cbrt(x: f64) -> f64 {
    if x == 0.0 || !x.is_finite() {
        return x;
    }
    let a = x.abs();
    // A first guess from ln and exp, then one Newton step (y' = y - (y^3 - a) / 3y^2).
    let y = exp(ln(a) / 3.0);
    let y = y - (y * y * y - a) / (3.0 * y * y);
    y.copysign(x)
}

/// (sin x, cos x), for the angles pi meets (a hue in radians; accurate while |x| < 1e6).
pub fn sin_cos(x: f64) -> (f64, f64) {
    if !x.is_finite() {
        return (f64::NAN, f64::NAN);
    }
    // x = k pi/2 + r with |r| <= pi/4 (pi/2 split in two for the subtraction).
    const PIO2_HI: f64 = 1.570_796_326_734_125_6;
    const PIO2_LO: f64 = 6.077_100_506_506_192e-11;
    let k = (x / std::f64::consts::FRAC_PI_2).round();
    let r = (x - k * PIO2_HI) - k * PIO2_LO;
    let r2 = r * r;
    let (mut sin, mut cos) = (r, 1.0);
    let (mut ts, mut tc): (f64, f64) = (r, 1.0);
    let mut n = 1.0;
    while ts.abs() > f64::EPSILON * 1e-3 || tc.abs() > f64::EPSILON * 1e-3 {
        ts *= -r2 / ((n + 1.0) * (n + 2.0));
        tc *= -r2 / (n * (n + 1.0));
        sin += ts;
        cos += tc;
        n += 2.0;
    }
    match (k as i64).rem_euclid(4) {
        0 => (sin, cos),
        1 => (cos, -sin),
        2 => (-sin, -cos),
        _ => (-cos, sin),
    }
}

/// (m, k) with x = m * 2^k and m in [0.5, 1), for finite positive x.
fn frexp(x: f64) -> (f64, i32) {
    let bits = x.to_bits();
    let exponent = ((bits >> 52) & 0x7ff) as i32;
    if exponent == 0 {
        // Subnormal: scale into the normal range first.
        let (m, k) = frexp(x * pow2(64));
        return (m, k - 64);
    }
    let m = f64::from_bits((bits & !(0x7ff << 52)) | (1022 << 52));
    (m, exponent - 1022)
}

/// 2^k for k in the normal exponent range.
fn pow2(k: i32) -> f64 {
    f64::from_bits(((k + 1023).clamp(1, 2046) as u64) << 52)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        a == b || ((a - b) / b).abs() < 4.0 * f64::EPSILON
    }

    #[test]
    fn ln_matches_the_standard_library() {
        let mut x = 1e-300;
        while x < 1e300 {
            for v in [x, x * 1.37, x * 2.9, x * 7.1] {
                assert!(close(ln(v), v.ln()), "ln({v}) = {} vs {}", ln(v), v.ln());
            }
            x *= 10.0;
        }
        for v in [
            1.0,
            2.0,
            0.5,
            std::f64::consts::E,
            1.0 + 1e-12,
            5e-324,
            f64::MAX,
        ] {
            assert!(
                close(ln(v), v.ln()) || (ln(v) - v.ln()).abs() < 1e-15,
                "ln({v})"
            );
        }
        assert_eq!(ln(1.0), 0.0);
        assert!(ln(-1.0).is_nan() && ln(f64::NAN).is_nan());
        assert_eq!(ln(0.0), f64::NEG_INFINITY);
        assert_eq!(ln(f64::INFINITY), f64::INFINITY);
    }

    /// The float methods that call libm; one anywhere in the crate links the library again.
    #[test]
    fn no_code_outside_this_module_calls_libm() {
        const CALLS: [&str; 16] = [
            ".ln()",
            ".log(",
            ".log2()",
            ".log10()",
            ".ln_1p()",
            ".exp()",
            ".exp2()",
            ".exp_m1()",
            ".powf(",
            ".cbrt()",
            ".sin()",
            ".cos()",
            ".tan()",
            ".sin_cos()",
            ".atan2(",
            ".hypot(",
        ];
        let mut found = Vec::new();
        let mut dirs = vec![std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src")];
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    dirs.push(path);
                } else if path.extension().is_some_and(|e| e == "rs")
                    && !path.ends_with("util/math.rs")
                {
                    let text = std::fs::read_to_string(&path).unwrap();
                    for call in CALLS.iter().filter(|c| text.contains(*c)) {
                        found.push(format!("{}: {call}", path.display()));
                    }
                }
            }
        }
        assert!(
            found.is_empty(),
            "use crate::util::math instead: {found:#?}"
        );
    }

    #[test]
    fn cbrt_and_sin_cos_match_the_standard_library() {
        for v in [
            1e-300, 1e-9, 0.001, 0.5, 1.0, 2.0, 27.0, 1234.5, 1e300, -8.0, -0.3,
        ] {
            assert!(
                close(cbrt(v), v.cbrt()),
                "cbrt({v}) = {} vs {}",
                cbrt(v),
                v.cbrt()
            );
        }
        assert_eq!(cbrt(0.0), 0.0);
        assert_eq!(cbrt(27.0), 3.0);
        // Every hue a theme can name, in tenths of a degree, and some larger angles.
        for tenth in -3600..=7200 {
            let x = (f64::from(tenth) / 10.0).to_radians();
            let ((s, c), (ss, sc)) = (sin_cos(x), x.sin_cos());
            assert!(
                (s - ss).abs() < 1e-15 && (c - sc).abs() < 1e-15,
                "sin_cos({x})"
            );
        }
        assert!(sin_cos(f64::NAN).0.is_nan());
    }

    #[test]
    fn exp_and_powf_match_the_standard_library() {
        let mut x = -700.0;
        while x < 700.0 {
            assert!(
                close(exp(x), x.exp()),
                "exp({x}) = {} vs {}",
                exp(x),
                x.exp()
            );
            x += 3.17;
        }
        assert_eq!(exp(0.0), 1.0);
        assert_eq!(exp(1000.0), f64::INFINITY);
        assert_eq!(exp(-1000.0), 0.0);
        // The sRGB curve over every 8-bit channel value, as the HTML export uses it.
        for c in 0..=255u8 {
            let s = (f64::from(c) / 255.0 + 0.055) / 1.055;
            // y * ln(x) carries ln's rounding, times y, into the exponent: a few ulps more.
            let (ours, std) = (powf(s, 2.4), s.powf(2.4));
            assert!(
                ((ours - std) / std).abs() < 1e-14,
                "powf({s}, 2.4) = {ours} vs {std}"
            );
        }
        assert_eq!(powf(3.0, 0.0), 1.0);
        // The sRGB encoding (1 / 2.4) over the linear range.
        let mut v = 0.003;
        while v <= 1.0 {
            let (ours, std) = (powf(v, 1.0 / 2.4), v.powf(1.0 / 2.4));
            assert!(((ours - std) / std).abs() < 1e-14, "powf({v}, 1/2.4)");
            v += 0.0007;
        }
        assert_eq!(powf(0.0, 2.0), 0.0);
    }
}
