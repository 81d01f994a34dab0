//! [`Container`]: a vertical stack of components, each rendered at the full width.
//!
//! A container keeps what each child rendered last time and the stacked result, so a frame
//! costs what changed: a child whose [`Component::revision`] did not move is not rendered
//! again, a nested container hands over only its changed rows, and the stacked lines are
//! rebuilt from the first changed row down. [`Component::render_borrowed`] hands those
//! lines to the [`Tui`](super::Tui) without a copy. The cache follows the children by
//! identity, so code that edits `children` directly stays correct.

use super::Component;
use crate::util::reuse;

#[derive(Default)]
pub struct Container {
    pub children: Vec<Box<dyn Component>>,
    cache: Cache,
}

#[derive(Default)]
struct Cache {
    width: Option<usize>,
    children: Vec<ChildLines>,
    /// The children's lines stacked: what `render` returns.
    lines: Vec<String>,
    /// The first row changed since the last `render_borrowed` (`None`: nothing changed).
    dirty_from: Option<usize>,
}

struct ChildLines {
    /// The child's address, to notice children replaced behind our back.
    id: usize,
    revision: Option<u64>,
    lines: Vec<String>,
}

impl Container {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn push(&mut self, child: impl Component + 'static) {
        self.children.push(Box::new(child));
    }

    pub fn clear(&mut self) {
        self.children.clear();
    }

    pub fn len(&self) -> usize {
        self.children.len()
    }

    pub fn is_empty(&self) -> bool {
        self.children.is_empty()
    }

    /// Brings the cache up to date with the children at `width`.
    fn update(&mut self, width: usize) {
        let cache = &mut self.cache;
        if cache.width != Some(width) {
            cache.width = Some(width);
            cache.children.clear();
            cache.lines.clear();
            cache.dirty_from = Some(0);
        }
        // Row where the stacked lines first differ from the cached ones.
        let mut first_changed: Option<usize> = None;
        let mut row = 0;
        for (i, child) in self.children.iter_mut().enumerate() {
            let id = (&**child as *const dyn Component).cast::<()>() as usize;
            let known = cache.children.get(i).filter(|c| c.id == id);
            let child_first = match child.render_borrowed(width) {
                Some((lines, since)) => match cache.children.get_mut(i).filter(|c| c.id == id) {
                    Some(cached) => {
                        let since = since.min(cached.lines.len()).min(lines.len());
                        let same = since == lines.len() && since == cached.lines.len();
                        if !same {
                            let end =
                                reuse::overwrite_at(&mut cached.lines, since, &lines[since..]);
                            cached.lines.truncate(end);
                        }
                        (!same).then_some(since)
                    }
                    None => {
                        store(&mut cache.children, i, id, None, lines.to_vec());
                        Some(0)
                    }
                },
                None => {
                    let revision = child.revision();
                    let fresh = known.is_some_and(|c| revision.is_some() && c.revision == revision);
                    if fresh {
                        None
                    } else {
                        let lines = child.render(width);
                        match cache.children.get_mut(i).filter(|c| c.id == id) {
                            Some(cached) => {
                                cached.revision = revision;
                                let diff = first_difference(&cached.lines, &lines);
                                if diff.is_some() {
                                    cached.lines = lines;
                                }
                                diff
                            }
                            None => {
                                store(&mut cache.children, i, id, revision, lines);
                                Some(0)
                            }
                        }
                    }
                }
            };
            if let Some(at) = child_first {
                first_changed.get_or_insert(row + at);
            }
            row += cache.children[i].lines.len();
        }
        if cache.children.len() > self.children.len() {
            cache.children.truncate(self.children.len());
            first_changed.get_or_insert(row);
        }
        let Some(from) = first_changed else {
            return;
        };
        // Rows from `from` on are overwritten in place, reusing their buffers.
        let from = from.min(cache.lines.len());
        let mut row = from;
        let mut start = 0;
        for child in &cache.children {
            let end = start + child.lines.len();
            if end > from {
                let skip = from.saturating_sub(start);
                row = reuse::overwrite_at(&mut cache.lines, row, &child.lines[skip..]);
            }
            start = end;
        }
        cache.lines.truncate(row);
        cache.dirty_from = Some(cache.dirty_from.map_or(from, |d| d.min(from)));
    }
}

/// Puts a fresh entry for child `i`, dropping entries from `i` on when they belong to other
/// children (an insertion or removal shifted them).
fn store(
    entries: &mut Vec<ChildLines>,
    i: usize,
    id: usize,
    revision: Option<u64>,
    lines: Vec<String>,
) {
    entries.truncate(i);
    entries.push(ChildLines {
        id,
        revision,
        lines,
    });
}

/// The first row where `old` and `new` differ, counting a length change; `None` if equal.
fn first_difference(old: &[String], new: &[String]) -> Option<usize> {
    let common = old.len().min(new.len());
    match (0..common).find(|&i| old[i] != new[i]) {
        Some(i) => Some(i),
        None if old.len() != new.len() => Some(common),
        None => None,
    }
}

impl Component for Container {
    fn render(&mut self, width: usize) -> Vec<String> {
        self.update(width);
        self.cache.lines.clone()
    }

    fn render_borrowed(&mut self, width: usize) -> Option<(&[String], usize)> {
        self.update(width);
        let since = self
            .cache
            .dirty_from
            .take()
            .unwrap_or(self.cache.lines.len());
        Some((&self.cache.lines, since))
    }

    fn invalidate(&mut self) {
        for child in &mut self.children {
            child.invalidate();
        }
        self.cache = Cache::default();
    }
}

/// Fixed lines, rendered as they are (each must fit the width).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StaticLines(pub Vec<String>);

impl Component for StaticLines {
    fn render(&mut self, _width: usize) -> Vec<String> {
        self.0.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::next_revision;
    use std::cell::Cell;
    use std::rc::Rc;

    /// Lines with a revision, counting how often they are rendered.
    struct Counted {
        lines: Vec<String>,
        revision: u64,
        renders: Rc<Cell<usize>>,
    }

    impl Component for Counted {
        fn render(&mut self, _width: usize) -> Vec<String> {
            self.renders.set(self.renders.get() + 1);
            self.lines.clone()
        }
        fn revision(&self) -> Option<u64> {
            Some(self.revision)
        }
    }

    fn counted(lines: &[&str], renders: &Rc<Cell<usize>>) -> Counted {
        Counted {
            lines: lines.iter().map(|l| l.to_string()).collect(),
            revision: next_revision(),
            renders: Rc::clone(renders),
        }
    }

    fn borrowed(c: &mut Container, width: usize) -> (Vec<String>, usize) {
        let (lines, since) = c.render_borrowed(width).unwrap();
        (lines.to_vec(), since)
    }

    #[test]
    fn unchanged_children_are_not_rendered_again_and_changes_are_reported_from_their_row() {
        let renders = Rc::new(Cell::new(0));
        let mut c = Container::new();
        c.push(counted(&["a", "b"], &renders));
        c.push(StaticLines(vec!["s".into()]));
        c.push(counted(&["c"], &renders));
        assert_eq!(
            borrowed(&mut c, 10),
            (
                vec!["a", "b", "s", "c"]
                    .into_iter()
                    .map(String::from)
                    .collect(),
                0
            )
        );
        assert_eq!(renders.get(), 2);
        assert_eq!(borrowed(&mut c, 10).1, 4, "nothing changed");
        assert_eq!(renders.get(), 2, "revisions unchanged: no re-render");

        let last = c.children.len() - 1;
        c.children[last] = Box::new(counted(&["c", "d"], &renders));
        let (lines, since) = borrowed(&mut c, 10);
        assert_eq!(lines, ["a", "b", "s", "c", "d"]);
        assert_eq!(since, 3, "the replaced child starts at row 3");
        assert_eq!(c.render(10), lines, "render agrees with render_borrowed");
    }

    #[test]
    fn removing_and_inserting_children_and_width_changes_rebuild_correctly() {
        let renders = Rc::new(Cell::new(0));
        let mut c = Container::new();
        for name in ["a", "b", "c"] {
            c.push(counted(&[name], &renders));
        }
        borrowed(&mut c, 10);
        c.children.remove(1);
        assert_eq!(
            borrowed(&mut c, 10),
            (vec!["a".to_string(), "c".to_string()], 1)
        );
        c.children.insert(0, Box::new(counted(&["z"], &renders)));
        assert_eq!(borrowed(&mut c, 10).0, ["z", "a", "c"]);
        c.children.clear();
        assert_eq!(borrowed(&mut c, 10), (Vec::new(), 0));
        c.push(counted(&["x"], &renders));
        borrowed(&mut c, 10);
        assert_eq!(
            borrowed(&mut c, 12),
            (vec!["x".to_string()], 0),
            "new width: all new"
        );
    }

    /// Lines that follow an edit, counting on the container to notice through `revision`.
    struct Editable(Rc<std::cell::RefCell<(Vec<String>, u64)>>);

    impl Component for Editable {
        fn render(&mut self, width: usize) -> Vec<String> {
            let lines = &self.0.borrow().0;
            lines.iter().map(|l| format!("{l}@{width}")).collect()
        }
        fn revision(&self) -> Option<u64> {
            Some(self.0.borrow().1)
        }
    }

    #[test]
    fn rows_overwritten_in_place_never_keep_stale_text() {
        // The stacked rows reuse their buffers: after every edit, shrink, growth and width
        // change the container must equal one built from scratch.
        let state = Rc::new(std::cell::RefCell::new((Vec::new(), next_revision())));
        let set = |lines: &[&str]| {
            *state.borrow_mut() = (
                lines.iter().map(|l| l.to_string()).collect(),
                next_revision(),
            );
        };
        let mut inner = Container::new();
        inner.push(StaticLines(vec!["top".into()]));
        inner.push(Editable(Rc::clone(&state)));
        let mut c = Container::new();
        c.push(inner);
        c.push(StaticLines(vec!["bottom".into()]));
        let steps: [(&[&str], usize); 6] = [
            (&["a long first line", "b"], 40),
            (&["x"], 40),
            (&["a long first line", "b", "c", "d"], 40),
            (&["a long first line", "B"], 40),
            (&["a long first line", "B"], 20),
            (&[], 20),
        ];
        for (lines, width) in steps {
            set(lines);
            let (got, _) = borrowed(&mut c, width);
            let mut fresh = Container::new();
            fresh.push(StaticLines(vec!["top".into()]));
            fresh.push(Editable(Rc::clone(&state)));
            fresh.push(StaticLines(vec!["bottom".into()]));
            assert_eq!(got, fresh.render(width), "after {lines:?} at {width}");
        }
    }

    #[test]
    fn nested_containers_pass_on_only_their_changed_rows() {
        let renders = Rc::new(Cell::new(0));
        let mut inner = Container::new();
        inner.push(counted(&["i1", "i2"], &renders));
        let mut outer = Container::new();
        outer.push(counted(&["o"], &renders));
        outer.push(inner);
        assert_eq!(borrowed(&mut outer, 10).0, ["o", "i1", "i2"]);
        assert_eq!(borrowed(&mut outer, 10).1, 3);
        assert_eq!(renders.get(), 2);
    }
}
