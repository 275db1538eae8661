//! Expansion of master configs into the sweep job matrix, identical to the reference generator.
