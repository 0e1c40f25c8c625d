//! Running on the testbed: experiment files (`rxecc run`) and paper
//! recipes (`rxecc paper`).

pub mod capture;
pub mod experiment;
pub mod fidelity;
pub mod figure;
pub mod paper;
pub mod perftest;
