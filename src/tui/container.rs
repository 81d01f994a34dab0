//! [`Container`]: a vertical stack of components, each rendered at the full width.

use super::Component;

#[derive(Default)]
pub struct Container {
    pub children: Vec<Box<dyn Component>>,
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
}

impl Component for Container {
    fn render(&mut self, width: usize) -> Vec<String> {
        let mut lines = Vec::new();
        for child in &mut self.children {
            lines.append(&mut child.render(width));
        }
        lines
    }

    fn invalidate(&mut self) {
        for child in &mut self.children {
            child.invalidate();
        }
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
