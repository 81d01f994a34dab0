#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| pi_fuzz::rpc::run(data));
