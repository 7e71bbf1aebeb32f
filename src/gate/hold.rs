//! What a hold appends after the previous request's messages, built once
//! for the replay's walk and for pi's live gate: the messages pi appended
//! since the previous call, each as the release renders it, or as it is
//! where the release folds it into a chain block further back (a hold never
//! loses a message), with the chain blocks the release puts after an
//! appended message.

/// One appended message of a hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Appended {
    /// The release's render at this position.
    Render(usize),
    /// Input message `j` as it is (the release left it out).
    Input(usize),
}

/// The appended part of a hold, given the release's render of `len`
/// slots (`input_of(i)`: the input message slot `i` renders, None for a
/// chain block) of `inputs` messages of which the first `from` were sent
/// before: the render's slots whose input is at or past `from` and the
/// chain blocks after such a slot, in order, with the appended inputs the
/// render left out placed in input order. Costs the appended part (a walk
/// back from the end to the first slot of an earlier input), not the
/// conversation.
pub fn appended(
    len: usize,
    input_of: &dyn Fn(usize) -> Option<usize>,
    from: usize,
    inputs: usize,
) -> Vec<Appended> {
    let mut start = len;
    while start > 0 && input_of(start - 1).is_none_or(|i| i >= from) {
        start -= 1;
    }
    let mut out = Vec::new();
    let mut next = from;
    let mut anchor = None;
    for i in start..len {
        match input_of(i) {
            Some(input) => {
                anchor = Some(input);
                if input >= from {
                    out.extend((next..input).map(Appended::Input));
                    out.push(Appended::Render(i));
                    next = input + 1;
                }
            }
            // A chain block belongs where the release puts it: after the
            // message it follows.
            None if anchor.is_some_and(|a| a >= from) => out.push(Appended::Render(i)),
            None => {}
        }
    }
    out.extend((next.max(from)..inputs).map(Appended::Input));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::script::{Op, Slot};

    fn appended_of(slots: &[Slot], from: usize, inputs: usize) -> Vec<Appended> {
        appended(slots.len(), &|i| slots[i].input(), from, inputs)
    }

    fn block() -> Slot {
        Slot {
            op: Op::Insert,
            ..Slot::keep(0)
        }
    }

    #[test]
    fn appends_what_came_after_the_previous_call() {
        use Appended::{Input, Render};
        // Inputs 0..3 sent before; 3..6 appended. The render drops input 4
        // (folded into a chain block after input 1), keeps 3 and 5, and puts
        // a block after 5.
        let slots = [
            Slot::keep(0),
            Slot::keep(1),
            block(),
            Slot::keep(2),
            Slot::keep(3),
            Slot::keep(5),
            block(),
        ];
        assert_eq!(
            appended_of(&slots, 3, 6),
            [Render(4), Input(4), Render(5), Render(6)]
        );
        // Inputs the render left out at the end, and a block after an
        // earlier input, which stays out.
        let slots = [Slot::keep(0), block(), Slot::keep(1)];
        assert_eq!(appended_of(&slots, 1, 4), [Render(2), Input(2), Input(3)]);
        // Nothing appended.
        assert_eq!(appended_of(&slots, 2, 2), []);
    }
}
