//! Snapshot undo for text components: before each change the component pushes a copy of
//! its state; undo pops the newest copy back. Coalescing (one snapshot per typed word) is
//! the component's choice of when to push.

/// A bounded stack of state snapshots.
#[derive(Debug, Clone)]
pub struct UndoStack<S> {
    stack: Vec<S>,
    limit: usize,
}

impl<S> Default for UndoStack<S> {
    fn default() -> Self {
        UndoStack {
            stack: Vec::new(),
            limit: 1000,
        }
    }
}

impl<S: Clone> UndoStack<S> {
    pub fn new() -> Self {
        Self::default()
    }

    /// Saves a copy of `state`; the oldest snapshot is dropped past the limit.
    pub fn push(&mut self, state: &S) {
        if self.stack.len() >= self.limit {
            self.stack.remove(0);
        }
        self.stack.push(state.clone());
    }

    pub fn pop(&mut self) -> Option<S> {
        self.stack.pop()
    }

    pub fn clear(&mut self) {
        self.stack.clear();
    }

    pub fn len(&self) -> usize {
        self.stack.len()
    }

    pub fn is_empty(&self) -> bool {
        self.stack.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pops_in_reverse_order() {
        let mut undo = UndoStack::new();
        undo.push(&"a".to_string());
        undo.push(&"ab".to_string());
        assert_eq!(undo.pop().as_deref(), Some("ab"));
        assert_eq!(undo.pop().as_deref(), Some("a"));
        assert_eq!(undo.pop(), None);
    }
}
