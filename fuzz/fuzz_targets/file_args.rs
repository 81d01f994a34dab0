#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| pi_fuzz::file_args::run(data));
