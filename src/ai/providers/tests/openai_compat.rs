//! Tests of the openai_compat provider: fixtures at every chunk boundary, request bodies, errors.

use super::*;

#[test]
fn short_hash_matches_pi() {
    // Values computed with pi-ai's shortHash.
    assert_eq!(short_hash(""), "k4n83c7h0j2b");
    assert_eq!(short_hash("abc"), "y0biex7f9bbh");
    assert_eq!(short_hash("item_ü€😀_very/long+id="), "927uyddmvh9m");
}
