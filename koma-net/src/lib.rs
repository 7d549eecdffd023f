//! What the network commands of `koma-net` share. The command table, the errors and the
//! exit status are the torch-free front's (the `koma` package, the binary users
//! run), re-exported here so that both binaries agree on them.

pub use koma::{
    bad, error_text, files_under, finish, network_command, parse_or_exit, BadInput, InputFiles, NetworkCommand,
    COMPANION, NETWORK_COMMANDS,
};
