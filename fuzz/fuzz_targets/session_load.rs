//! Arbitrary bytes as a pi session file: the one-shot load in both dialects,
//! and the walk a replay makes (every model call's leaf through the
//! incremental handler view and the state builder). Any answer must be a
//! typed error or JSON texts that are canonical JSON; nothing may panic,
//! hang or recurse without bound.

#![no_main]

use condense_native::{
    load, model_calls, path_to, CondenseState, ContextView, Dialect, Leaf, LoadOptions, SessionFile,
};
use condense_native::{read, Input};
use libfuzzer_sys::fuzz_target;

/// Messages (level 1, holding messages as deep as the render path takes)
/// and states nest deeper than one message may.
const ANY_DEPTH: Input = Input {
    max_depth: usize::MAX,
    ..Input::BYTES
};

fn assert_canonical(what: &str, text: &[u8]) {
    match read(text, ANY_DEPTH) {
        Ok(tape) => assert!(tape.canonical, "{what} is not canonical JSON"),
        Err(e) => panic!("{what} does not parse: {e}"),
    }
}

fuzz_target!(|data: &[u8]| {
    for dialect in [Dialect::V2_4, Dialect::V2_9] {
        let options = LoadOptions {
            leaf_id: None,
            dialect,
        };
        if let Ok(loaded) = load(data, &options) {
            assert_canonical("messages", &loaded.messages);
            assert_canonical("state", &loaded.state);
            assert_canonical("frontier", &loaded.frontier);
        }
    }
    let Ok(file) = SessionFile::parse(data) else {
        return;
    };
    let Ok(path) = path_to(&file, &Leaf::Active) else {
        return;
    };
    let mut view = ContextView::new(&file, &path.entries);
    let mut state = CondenseState::new(Dialect::V2_9);
    let mut applied = 0;
    for call in model_calls(&file, &path.entries) {
        let Some(leaf) = call.leaf else { continue };
        if view.seek(leaf).is_err() {
            return;
        }
        assert!(view.take_changed_from() <= view.messages().len());
        while applied <= leaf {
            if state
                .apply(file.entry(path.entries[applied] as usize))
                .is_err()
            {
                return;
            }
            applied += 1;
        }
    }
});
