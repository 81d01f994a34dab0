//! The Emacs-style kill ring behind Ctrl+K / Ctrl+U / Ctrl+W (kill), Ctrl+Y (yank) and
//! Alt+Y (yank-pop). Consecutive kills accumulate into one entry: backward kills prepend,
//! forward kills append, so yanking restores the text in its original order.

/// Killed text, most recent last.
#[derive(Debug, Clone, Default)]
pub struct KillRing {
    ring: Vec<String>,
}

impl KillRing {
    pub fn new() -> Self {
        Self::default()
    }

    /// Records killed text. With `accumulate` (the previous action was also a kill) it is
    /// merged into the newest entry, before it when `prepend` (a backward kill).
    pub fn push(&mut self, text: &str, accumulate: bool, prepend: bool) {
        if text.is_empty() {
            return;
        }
        match self.ring.last_mut() {
            Some(last) if accumulate => {
                if prepend {
                    last.insert_str(0, text);
                } else {
                    last.push_str(text);
                }
            }
            _ => self.ring.push(text.to_string()),
        }
    }

    /// The entry a yank inserts.
    pub fn peek(&self) -> Option<&str> {
        self.ring.last().map(String::as_str)
    }

    /// Yank-pop: the newest entry moves to the back, the one before it becomes current.
    pub fn rotate(&mut self) {
        if self.ring.len() > 1 {
            if let Some(last) = self.ring.pop() {
                self.ring.insert(0, last);
            }
        }
    }

    pub fn len(&self) -> usize {
        self.ring.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ring.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accumulates_and_rotates() {
        let mut ring = KillRing::new();
        ring.push("world", false, false);
        ring.push("hello ", true, true);
        ring.push("!", true, false);
        assert_eq!(ring.peek(), Some("hello world!"));
        ring.push("other", false, false);
        ring.push("", false, false);
        assert_eq!(ring.len(), 2);
        ring.rotate();
        assert_eq!(ring.peek(), Some("hello world!"));
        ring.rotate();
        assert_eq!(ring.peek(), Some("other"));
    }
}
