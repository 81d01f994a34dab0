//! Overwriting a vector's elements in place, so buffers kept across frames (rendered lines)
//! reuse their elements' allocations instead of dropping them and allocating new ones:
//! `String::clone_from` copies into the existing buffer when it is large enough.

/// Makes `dst[at..at + src.len()]` equal to `src`, cloning into the elements already there
/// and appending the rest; elements past that range are left alone (truncate them if they
/// should go). `at` past the end counts as the end. Returns the index after the last
/// element written.
pub fn overwrite_at<T: Clone>(dst: &mut Vec<T>, at: usize, src: &[T]) -> usize {
    let at = at.min(dst.len());
    let reused = (dst.len() - at).min(src.len());
    for (old, new) in dst[at..at + reused].iter_mut().zip(src) {
        old.clone_from(new);
    }
    dst.extend_from_slice(&src[reused..]);
    at + src.len()
}

/// Makes `dst` equal to `src`, reusing its elements (`Vec::clone_from` for a slice).
pub fn assign<T: Clone>(dst: &mut Vec<T>, src: &[T]) {
    let end = overwrite_at(dst, 0, src);
    dst.truncate(end);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn overwrite_reuses_the_range_appends_the_rest_and_keeps_what_follows() {
        let mut dst = strings(&["a", "b", "c", "d"]);
        assert_eq!(overwrite_at(&mut dst, 1, &strings(&["x", "y"])), 3);
        assert_eq!(dst, strings(&["a", "x", "y", "d"]));
        assert_eq!(overwrite_at(&mut dst, 3, &strings(&["p", "q"])), 5);
        assert_eq!(dst, strings(&["a", "x", "y", "p", "q"]));
        assert_eq!(
            overwrite_at(&mut dst, 9, &strings(&["z"])),
            6,
            "past the end appends"
        );
        assert_eq!(dst.last().map(String::as_str), Some("z"));
    }

    #[test]
    fn assign_equals_the_source_and_keeps_a_buffer_that_is_big_enough() {
        let mut dst = strings(&["a long line", "b", "c"]);
        let kept = dst[0].as_ptr();
        assign(&mut dst, &strings(&["short"]));
        assert_eq!(dst, strings(&["short"]));
        assert_eq!(dst[0].as_ptr(), kept, "the first line's buffer was reused");
        assign(&mut dst, &strings(&["1", "2", "3"]));
        assert_eq!(dst, strings(&["1", "2", "3"]));
        assign(&mut dst, &[]);
        assert!(dst.is_empty());
    }
}
