// SPDX-License-Identifier: GPL-2.0

//! rxe_cc's knobs as the algorithms read them: `glue.c`'s module
//! parameters, defined once in `cc_core::knobs` (`knobs.h` is generated
//! from it).

use crate::cc_core::knobs::{Knob, KnobSource};
use crate::ffi;

/// The module parameters, as they are now (each read validated by its
/// setter in `glue.c`).
pub(crate) struct ModuleKnobs;

impl KnobSource for ModuleKnobs {
    fn get(&self, knob: Knob) -> u32 {
        // SAFETY: reading a knob has no preconditions; ids are in range.
        unsafe { ffi::rxe_cc_knob(knob as u32) }
    }
}
