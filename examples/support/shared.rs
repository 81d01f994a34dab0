//! [`Shared`]: a component the app keeps a handle on while a container owns it (examples).

use std::cell::RefCell;
use std::rc::Rc;

use pi::tui::{Component, InputEvent};

/// Both the container and the app hold one; rendering and input go to the same component.
pub struct Shared<C>(pub Rc<RefCell<C>>);

impl<C> Clone for Shared<C> {
    fn clone(&self) -> Self {
        Shared(Rc::clone(&self.0))
    }
}

impl<C> Shared<C> {
    pub fn new(component: C) -> Shared<C> {
        Shared(Rc::new(RefCell::new(component)))
    }

    pub fn get(&self) -> std::cell::RefMut<'_, C> {
        self.0.borrow_mut()
    }
}

impl<C: Component> Component for Shared<C> {
    fn render(&mut self, width: usize) -> Vec<String> {
        self.0.borrow_mut().render(width)
    }
    fn handle_input(&mut self, event: &InputEvent) -> bool {
        self.0.borrow_mut().handle_input(event)
    }
    fn invalidate(&mut self) {
        self.0.borrow_mut().invalidate();
    }
    fn revision(&self) -> Option<u64> {
        self.0.borrow().revision()
    }
}
