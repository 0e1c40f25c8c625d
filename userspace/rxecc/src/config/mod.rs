//! What a user writes, parsed and checked before anything runs:
//! topologies, experiment files and flow files.

pub mod claim;
pub mod experiment;
mod lines;
pub mod perftest;
pub mod scale;
pub mod topology;
pub mod workload;
