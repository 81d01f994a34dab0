//! The crate's one sort: stable sorts of any slice through a single compiled copy of the
//! standard library's sort.
//!
//! `slice::sort_by` and its siblings compile a fresh ~5 KB copy of the sort algorithm for
//! every element type and comparator; pi's call sites made 47 of them, about 245 KB of the
//! binary. Here each sort instead orders the element *indices* with one non-generic comparator
//! (`&mut dyn FnMut(usize, usize) -> Ordering`), then moves the elements into that order with
//! a small generic cycle walk. Use these functions instead of the slice methods in `src/`
//! (clippy's `disallowed_methods` in `clippy.toml` enforces it). Every function is stable:
//! elements that compare equal keep their input order, exactly as `slice::sort_by` leaves them.

use std::cmp::Ordering;

/// Sorts `items` in ascending order, stably (`slice::sort`).
pub fn sort<T: Ord>(items: &mut [T]) {
    sort_by(items, T::cmp);
}

/// Sorts `items` by `compare`, stably (`slice::sort_by`).
pub fn sort_by<T>(items: &mut [T], mut compare: impl FnMut(&T, &T) -> Ordering) {
    if items.len() < 2 {
        return;
    }
    let mut order = sorted_order(items.len(), &mut |a, b| {
        // SAFETY: `sorted_order` only passes indices below the length it was given.
        unsafe { compare(items.get_unchecked(a), items.get_unchecked(b)) }
    });
    apply_order(items, order.as_mut_slice());
}

/// Sorts `items` by a key computed at every comparison, stably (`slice::sort_by_key`): for
/// cheap keys such as a number or a `bool` read off the element.
pub fn sort_by_key<T, K: Ord>(items: &mut [T], mut key: impl FnMut(&T) -> K) {
    sort_by(items, |a, b| key(a).cmp(&key(b)));
}

/// Sorts `items` by a key computed once per element, stably (`slice::sort_by_cached_key`):
/// for keys that cost an allocation, such as a lowercased name.
pub fn sort_by_cached_key<T, K: Ord>(items: &mut [T], key: impl FnMut(&T) -> K) {
    sort_by_cached_key_with(items, key, K::cmp);
}

/// Sorts `items` by a key computed once per element and compared with `compare_keys`,
/// stably: [`sort_by_cached_key`] for keys whose order is not their `Ord`.
pub fn sort_by_cached_key_with<T, K>(
    items: &mut [T],
    key: impl FnMut(&T) -> K,
    mut compare_keys: impl FnMut(&K, &K) -> Ordering,
) {
    if items.len() < 2 {
        return;
    }
    let keys: Vec<K> = items.iter().map(key).collect();
    let mut order = sorted_order(keys.len(), &mut |a, b| {
        // SAFETY: `sorted_order` only passes indices below the length it was given.
        unsafe { compare_keys(keys.get_unchecked(a), keys.get_unchecked(b)) }
    });
    drop(keys);
    apply_order(items, order.as_mut_slice());
}

/// Sorts `items` by `compare` and keeps the first `count`, as `sort_by` then `truncate` would,
/// but in about one comparison per element when `count` is small: for a "best 20 of 20,000".
pub fn sort_and_truncate_by<T>(
    items: &mut Vec<T>,
    count: usize,
    mut compare: impl FnMut(&T, &T) -> Ordering,
) {
    if count >= items.len() {
        sort_by(items, compare);
        return;
    }
    let mut order = first_in_order(items.len(), count, &mut |a, b| {
        // SAFETY: `first_in_order` only passes indices below the length it was given.
        unsafe { compare(items.get_unchecked(a), items.get_unchecked(b)) }
    });
    apply_order(items, order.as_mut_slice());
    items.truncate(count);
}

/// Up to this many elements are ordered by insertion on the stack, without an allocation
/// (the standard sort does the same below 20).
const SHORT: usize = 16;

/// A permutation of `0..len`: position `i` names the element that belongs at `i`, in `short`
/// when it is that short. `u32` halves what the sort moves.
struct Order {
    short: [u32; SHORT],
    long: Vec<u32>,
    len: usize,
}

impl Order {
    fn as_mut_slice(&mut self) -> &mut [u32] {
        if self.long.is_empty() {
            &mut self.short[..self.len]
        } else {
            &mut self.long
        }
    }
}

/// The indices `0..len` in the order `compare` puts the elements they stand for, equal ones
/// by index. Holds the only instantiation of the standard library's sort in the crate.
#[inline(never)]
fn sorted_order(len: usize, compare: &mut dyn FnMut(usize, usize) -> Ordering) -> Order {
    let mut order = Order {
        short: [0; SHORT],
        long: Vec::new(),
        len,
    };
    if len <= SHORT {
        let short = &mut order.short[..len];
        for i in 0..len {
            short[i] = i as u32;
            let mut j = i;
            while j > 0 && compare(short[j - 1] as usize, short[j] as usize) == Ordering::Greater {
                short.swap(j - 1, j);
                j -= 1;
            }
        }
    } else {
        assert!(u32::try_from(len).is_ok(), "cannot sort {len} elements");
        order.long = (0..len as u32).collect();
        // The standard sort is stable, so indices of equal elements stay ascending.
        #[allow(clippy::disallowed_methods)]
        order.long.sort_by(|&a, &b| compare(a as usize, b as usize));
    }
    order
}

/// A permutation of `0..len` whose first `count` indices are those of the `count` first
/// elements in `compare` order (equal ones by index), in that order; the rest follow in
/// index order. Each element is compared with the worst one kept so far; only the few that
/// beat it are placed by binary search.
#[inline(never)]
fn first_in_order(
    len: usize,
    count: usize,
    compare: &mut dyn FnMut(usize, usize) -> Ordering,
) -> Order {
    let mut best: Vec<u32> = Vec::with_capacity(count + 1);
    for i in 0..len {
        if best.len() == count {
            match best.last() {
                Some(&worst) if compare(i, worst as usize) == Ordering::Less => {}
                _ => continue,
            }
        }
        // After every kept element not greater than `i`: equal ones came first.
        let at = best.partition_point(|&kept| compare(kept as usize, i) != Ordering::Greater);
        best.insert(at, i as u32);
        best.truncate(count);
    }
    let mut chosen = vec![false; len];
    for &i in &best {
        chosen[i as usize] = true;
    }
    best.extend((0..len as u32).filter(|&i| !chosen[i as usize]));
    Order {
        short: [0; SHORT],
        long: best,
        len,
    }
}

/// Rearranges `items` so that position `i` holds the element that was at `order[i]`
/// (`order` is a permutation of `0..items.len()`), one cycle of the permutation at a time.
fn apply_order<T>(items: &mut [T], order: &mut [u32]) {
    for start in 0..items.len() {
        // Every position of a cycle already walked has `order[i] == i`.
        let mut hole = start;
        loop {
            let source = order[hole] as usize;
            order[hole] = hole as u32;
            if source == start || source == hole {
                break;
            }
            // `hole` takes its element; the element of `start` moves on to `source`.
            items.swap(hole, source);
            hole = source;
        }
    }
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // std's sorts are the reference here
mod tests {
    use super::*;

    /// A fixed pseudo-random sequence (xorshift), so a failure reproduces.
    fn pseudo_random_bytes(seed: u64, len: usize) -> Vec<u8> {
        let mut state = seed | 1;
        (0..len)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                (state >> 24) as u8
            })
            .collect()
    }

    #[test]
    fn empty_and_single_element_slices_are_left_alone() {
        let mut empty: Vec<i32> = Vec::new();
        sort(&mut empty);
        assert!(empty.is_empty());
        let mut one = vec![7];
        sort_by(&mut one, |a: &i32, b| b.cmp(a));
        assert_eq!(one, [7]);
    }

    #[test]
    fn equal_elements_keep_their_input_order() {
        let mut items = vec![(2, 'a'), (1, 'b'), (2, 'c'), (1, 'd'), (0, 'e'), (2, 'f')];
        sort_by_key(&mut items, |&(k, _)| k);
        assert_eq!(
            items,
            [(0, 'e'), (1, 'b'), (1, 'd'), (2, 'a'), (2, 'c'), (2, 'f')]
        );
        let mut all_equal: Vec<(u8, usize)> = (0..50).map(|i| (3, i)).collect();
        sort_by_key(&mut all_equal, |&(k, _)| k);
        assert!(all_equal.iter().enumerate().all(|(i, &(_, n))| n == i));
    }

    #[test]
    fn cached_keys_are_computed_once_per_element() {
        let mut names = vec!["b", "A", "a", "C", "B"];
        let mut calls = 0;
        sort_by_cached_key(&mut names, |n| {
            calls += 1;
            n.to_lowercase()
        });
        assert_eq!(calls, 5);
        assert_eq!(names, ["A", "a", "b", "B", "C"]);

        let mut reversed = vec!["x", "yy", "z", "ww"];
        sort_by_cached_key_with(&mut reversed, |s| s.len(), |a, b| b.cmp(a));
        assert_eq!(reversed, ["yy", "ww", "x", "z"]);
    }

    #[test]
    fn matches_std_stable_sort_on_random_data() {
        for round in 0..200 {
            // Lengths on both sides of `SHORT`.
            let len = round % 67;
            let bytes = pseudo_random_bytes(round as u64 + 1, len * 2);
            // Few distinct keys, so equal keys are common; the payload tells them apart.
            let input: Vec<(u8, String)> = bytes
                .chunks(2)
                .enumerate()
                .map(|(i, pair)| (pair[0] % 5, format!("{i}-{}", pair[1])))
                .collect();

            let mut expected = input.clone();
            expected.sort_by_key(|a| a.0);
            let mut got = input.clone();
            sort_by(&mut got, |a, b| a.0.cmp(&b.0));
            assert_eq!(got, expected, "sort_by on {input:?}");

            let mut expected = input.clone();
            expected.sort_by_key(|p| std::cmp::Reverse(p.0));
            let mut got = input.clone();
            sort_by_key(&mut got, |p| std::cmp::Reverse(p.0));
            assert_eq!(got, expected, "sort_by_key on {input:?}");

            let mut expected = input.clone();
            expected.sort_by_cached_key(|p| p.1.len());
            let mut got = input.clone();
            sort_by_cached_key(&mut got, |p| p.1.len());
            assert_eq!(got, expected, "sort_by_cached_key on {input:?}");

            let mut expected = input.clone();
            expected.sort();
            let mut got = input;
            sort(&mut got);
            assert_eq!(got, expected);
        }
    }

    #[test]
    fn sort_and_truncate_keeps_what_sorting_then_truncating_keeps() {
        for round in 0..120 {
            let len = round % 40;
            let bytes = pseudo_random_bytes(round as u64 + 7, len);
            let input: Vec<(u8, usize)> = bytes.iter().map(|b| b % 6).zip(0..).collect();
            for count in [0, 1, 3, 16, 17, 25, 40] {
                let mut expected = input.clone();
                expected.sort_by_key(|p| std::cmp::Reverse(p.0));
                expected.truncate(count);
                let mut got = input.clone();
                sort_and_truncate_by(&mut got, count, |a, b| b.0.cmp(&a.0));
                assert_eq!(got, expected, "best {count} of {input:?}");
            }
        }
    }

    #[test]
    fn apply_order_realises_any_permutation() {
        // Cycles of every length, fixed points, and the reversal.
        let orders: [&[usize]; 5] = [
            &[0, 1, 2, 3],
            &[3, 2, 1, 0],
            &[1, 2, 3, 0],
            &[2, 0, 1, 3],
            &[1, 0, 3, 4, 2],
        ];
        for order in orders {
            let mut items: Vec<String> = (0..order.len()).map(|i| i.to_string()).collect();
            let mut permutation: Vec<u32> = order.iter().map(|&i| i as u32).collect();
            apply_order(&mut items, &mut permutation);
            let expected: Vec<String> = order.iter().map(|i| i.to_string()).collect();
            assert_eq!(items, expected, "order {order:?}");
        }
    }
}
