mod common;

use common::*;
use koma_model::tch::{Device, Kind};
use koma_model::{Evaluation, Evaluator, Net, NetConfig, NetShape, Precision, TorchEvaluator, UniformEvaluator};

#[test]
fn parameter_names_are_the_checkpoint_format() {
    let cfg = NetConfig { blocks: 2, global_pooling_every: 2, ..tiny_config() };
    let net = Net::new(&cfg, tiny_shape(), 1, Device::Cpu).unwrap();
    let names: Vec<String> = net.parameter_shapes().into_iter().map(|(n, _)| n).collect();
    let bn = |p: &str| ["bias", "running_mean", "running_var", "weight"].map(|s| format!("{p}.{s}")).to_vec();
    let mut expected = vec![];
    expected.extend(bn("blocks.0.bn1"));
    expected.extend(bn("blocks.0.bn2"));
    expected.push("blocks.0.conv1.weight".into());
    expected.push("blocks.0.conv2.weight".into());
    expected.extend(bn("blocks.1.bn1"));
    expected.extend(bn("blocks.1.bn2"));
    expected.push("blocks.1.conv1.weight".into());
    expected.push("blocks.1.conv2.weight".into());
    expected.extend(bn("blocks.1.gpool.bn"));
    expected.push("blocks.1.gpool.conv.weight".into());
    expected.push("blocks.1.gpool.linear.weight".into());
    expected.extend(bn("policy.bn"));
    expected.push("policy.conv.weight".into());
    expected.push("policy.out.bias".into());
    expected.push("policy.out.weight".into());
    expected.extend(bn("stem.bn"));
    expected.push("stem.conv.weight".into());
    expected.extend(bn("value.bn"));
    expected.push("value.conv.weight".into());
    expected.push("value.fc1.bias".into());
    expected.push("value.fc1.weight".into());
    expected.push("value.fc2.bias".into());
    expected.push("value.fc2.weight".into());
    expected.sort();
    assert_eq!(names, expected);

    let shapes: std::collections::HashMap<_, _> = net.parameter_shapes().into_iter().collect();
    assert_eq!(shapes["stem.conv.weight"], vec![8, 6, 3, 3]);
    assert_eq!(shapes["blocks.1.gpool.conv.weight"], vec![4, 8, 3, 3]);
    assert_eq!(shapes["blocks.1.gpool.linear.weight"], vec![8, 8]);
    assert_eq!(shapes["policy.conv.weight"], vec![6, 8, 3, 3]);
    assert_eq!(shapes["policy.out.weight"], vec![5, 6, 1, 1]);
    assert_eq!(shapes["value.conv.weight"], vec![2, 8, 1, 1]);
    assert_eq!(shapes["value.fc1.weight"], vec![16, 2 * 81]);
    assert_eq!(shapes["value.fc2.weight"], vec![3, 16]);
}

/// The parameter table computed from the config (what loaders check a file against
/// before building anything) is exactly the tensors `Net::new` creates, for every layer
/// kind and option.
#[test]
fn the_parameter_table_without_a_network_is_the_networks() {
    let shogi = shogi_shape();
    let configs = [
        (tiny_config(), tiny_shape()),
        (NetConfig { blocks: 0, ..tiny_config() }, tiny_shape()),
        (NetConfig { policy_channels: None, global_pooling_every: 1, ..tiny_config() }, shogi),
        (NetConfig { reply_policy_head: true, material_head: true, ..tiny_config() }, shogi),
        (NetConfig { blocks: 1, channels: 16, value_channels: 3, value_hidden: 7, ..NetConfig::default() }, shogi),
        (tiny_config(), NetShape { input_planes: 3, board_height: 15, board_width: 15, policy_planes: 2 }),
    ];
    for (cfg, shape) in configs {
        let net = Net::new(&cfg, shape, 1, Device::Cpu).unwrap();
        let specs = koma_model::parameter_specs(&cfg, shape);
        let table: Vec<(String, Vec<i64>)> =
            specs.iter().map(|s| (s.name.clone(), s.shape.iter().map(|&d| d as i64).collect())).collect();
        assert_eq!(table, net.parameter_shapes(), "{cfg:?}");
        assert_eq!(koma_model::parameter_count(&specs), net.parameter_count() as u64);
    }
}

fn weights(net: &Net) -> Vec<(String, Vec<f32>)> {
    let mut v: Vec<_> = net
        .var_store()
        .variables()
        .into_iter()
        .map(|(k, t)| {
            let t = t.to_kind(Kind::Float).flatten(0, -1);
            (k, Vec::<f32>::try_from(&t).unwrap())
        })
        .collect();
    v.sort_by(|a, b| a.0.cmp(&b.0));
    v
}

#[test]
fn same_seed_same_weights_different_seed_different_weights() {
    let (cfg, shape) = (tiny_config(), tiny_shape());
    let a = weights(&Net::new(&cfg, shape, 42, Device::Cpu).unwrap());
    let b = weights(&Net::new(&cfg, shape, 42, Device::Cpu).unwrap());
    let c = weights(&Net::new(&cfg, shape, 43, Device::Cpu).unwrap());
    assert_eq!(a, b, "same seed must give bit-identical weights");
    let differing = a.iter().zip(&c).filter(|(x, y)| x.1 != y.1).count();
    // Every convolution and linear weight is random; batch norm tensors are constant.
    assert!(differing >= 10, "only {differing} tensors differ between seeds 42 and 43");
    assert!(a.iter().zip(&c).all(|(x, y)| x.0 == y.0));
}

#[test]
fn seeded_init_is_deterministic_across_threads() {
    let (cfg, shape) = (tiny_config(), tiny_shape());
    let reference = weights(&Net::new(&cfg, shape, 7, Device::Cpu).unwrap());
    let handles: Vec<_> = (0..4)
        .map(|i| {
            let cfg = cfg.clone();
            std::thread::spawn(move || {
                weights(&Net::new(&cfg, shape, if i % 2 == 0 { 7 } else { 8 }, Device::Cpu).unwrap())
            })
        })
        .collect();
    for (i, h) in handles.into_iter().enumerate() {
        let w = h.join().unwrap();
        assert_eq!(w == reference, i % 2 == 0, "thread {i}");
    }
}

#[test]
fn fused_inference_matches_the_training_graph() {
    let net = Net::new(&tiny_config(), tiny_shape(), 3, Device::Cpu).unwrap();
    train_bn_stats(&net, 100);
    let n = 7;
    let x = random_inputs(n * tiny_shape().input_len(), 5);
    let (policy, wdl_logits) = net.forward_host(&x, n).unwrap();
    let ev = TorchEvaluator::new(&net, Device::Cpu, Precision::F32).unwrap();
    let out = ev.evaluate(&x, n).unwrap();
    let d = max_abs_diff(out.policy_all(), &policy);
    assert!(d < 1e-4, "policy differs by {d}");
    for i in 0..n {
        let l = &wdl_logits[3 * i..3 * i + 3];
        let m = l.iter().cloned().fold(f32::MIN, f32::max);
        let e: Vec<f32> = l.iter().map(|v| (v - m).exp()).collect();
        let s: f32 = e.iter().sum();
        let p = out.wdl(i);
        for k in 0..3 {
            assert!((p[k] - e[k] / s).abs() < 1e-5, "wdl {i} {k}: {} vs {}", p[k], e[k] / s);
        }
        assert!((p.iter().sum::<f32>() - 1.0).abs() < 1e-5);
    }
    // Outputs depend on the input (not a constant network).
    let out2 = ev.evaluate(&random_inputs(n * tiny_shape().input_len(), 6), n).unwrap();
    assert!(max_abs_diff(out.policy_all(), out2.policy_all()) > 1e-3);
}

#[test]
fn batched_results_equal_one_at_a_time() {
    let shape = tiny_shape();
    let net = Net::new(&tiny_config(), shape, 11, Device::Cpu).unwrap();
    train_bn_stats(&net, 200);
    let ev = TorchEvaluator::new(&net, Device::Cpu, Precision::Auto).unwrap();
    assert_eq!(ev.kind(), Kind::Float);
    let n = 13;
    let x = random_inputs(n * shape.input_len(), 9);
    let batched = ev.evaluate(&x, n).unwrap();
    assert_eq!(batched.batch(), n);
    let mut single = Evaluation::new();
    for i in 0..n {
        let xi = &x[i * shape.input_len()..(i + 1) * shape.input_len()];
        ev.evaluate_into(xi, 1, &mut single).unwrap();
        let d = max_abs_diff(single.policy(0), batched.policy(i));
        assert!(d < 1e-4, "position {i}: policy differs by {d}");
        let dw = max_abs_diff(&single.wdl(0), &batched.wdl(i));
        assert!(dw < 1e-5, "position {i}: wdl differs by {dw}");
    }
}

#[test]
fn evaluator_rejects_wrong_input_length() {
    let shape = tiny_shape();
    let net = Net::new(&tiny_config(), shape, 1, Device::Cpu).unwrap();
    let ev = TorchEvaluator::new(&net, Device::Cpu, Precision::F32).unwrap();
    let err = ev.evaluate(&vec![0.0; shape.input_len() * 2 - 1], 2).unwrap_err();
    assert!(matches!(err, koma_model::EvalError::InputLength { .. }), "{err}");
    let u = UniformEvaluator::new(shape);
    assert!(u.evaluate(&[0.0; 3], 1).is_err());
    // Empty batches are fine.
    assert_eq!(ev.evaluate(&[], 0).unwrap().batch(), 0);
}

#[test]
fn uniform_evaluator_is_neutral() {
    let shape = NetShape { input_planes: 2, board_height: 5, board_width: 5, policy_planes: 3 };
    let u = UniformEvaluator::new(shape);
    let out = u.evaluate(&vec![0.5; 4 * shape.input_len()], 4).unwrap();
    assert_eq!(out.policy_all().len(), 4 * 75);
    assert!(out.policy_all().iter().all(|&v| v == 0.0));
    for i in 0..4 {
        assert_eq!(out.wdl(i), [1.0 / 3.0; 3]);
        assert_eq!(out.value(i), 0.0);
    }
}

#[test]
fn half_precision_on_cpu_is_close() {
    // bf16 is what a CPU without f16 kernels can run; check the precision plumbing.
    let shape = tiny_shape();
    let net = Net::new(&tiny_config(), shape, 4, Device::Cpu).unwrap();
    train_bn_stats(&net, 300);
    let x = random_inputs(4 * shape.input_len(), 1);
    let full = TorchEvaluator::new(&net, Device::Cpu, Precision::F32).unwrap().evaluate(&x, 4).unwrap();
    let low = TorchEvaluator::new(&net, Device::Cpu, Precision::Bf16).unwrap();
    assert_eq!(low.kind(), Kind::BFloat16);
    let low = low.evaluate(&x, 4).unwrap();
    let scale = full.policy_all().iter().fold(0f32, |m, v| m.max(v.abs())).max(1.0);
    let d = max_abs_diff(full.policy_all(), low.policy_all());
    assert!(d < 0.1 * scale, "bf16 policy differs by {d} (scale {scale})");
}

#[test]
fn config_from_toml_uses_defaults_and_rejects_unknown_fields() {
    #[derive(serde::Deserialize)]
    struct File {
        net: NetConfig,
    }
    let f: File = toml::from_str("[net]\nblocks = 4\nchannels = 32\n").unwrap();
    assert_eq!(f.net, NetConfig { blocks: 4, channels: 32, ..NetConfig::default() });
    assert!(toml::from_str::<File>("[net]\nblokcs = 4\n").is_err());
    let bad = NetConfig { channels: 0, ..NetConfig::default() };
    assert!(bad.validate().is_err());
    assert!(Net::new(&bad, tiny_shape(), 0, Device::Cpu).is_err());
    let bad_shape = NetShape { policy_planes: 0, ..tiny_shape() };
    assert!(Net::new(&NetConfig::default(), bad_shape, 0, Device::Cpu).is_err());
}

#[test]
fn libtorch_cuda_is_linked_into_binaries() {
    let info = koma_model::torch_info();
    let lib = std::path::Path::new(info.libtorch_lib);
    if lib.join("libtorch_cuda.so").exists() {
        assert!(info.cuda_backend_linked);
        // Linked means loaded at start-up, GPU or not.
        let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
        assert!(maps.contains("libtorch_cuda.so"), "libtorch_cuda.so is not loaded");
    }
    // Without a GPU, asking for CUDA is a clear error, `auto` falls back to the CPU.
    if !info.cuda_available {
        assert!(koma_model::parse_device("cuda").is_err());
        assert_eq!(koma_model::parse_device("auto").unwrap(), Device::Cpu);
    }
    assert_eq!(koma_model::parse_device("cpu").unwrap(), Device::Cpu);
    assert!(koma_model::parse_device("tpu").is_err());
}

#[test]
fn bench_forward_reports_positive_throughput() {
    let rows = koma_model::bench_forward(
        &tiny_config(),
        tiny_shape(),
        Device::Cpu,
        Precision::F32,
        &[1, 8],
        &koma_model::BenchOptions {
            warmup_iters: 1,
            min_time: std::time::Duration::from_millis(20),
            min_iters: 2,
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[1].batch, 8);
    for r in rows {
        assert!(r.iterations >= 2 && r.evals_per_sec > 0.0 && r.ms_per_batch > 0.0, "{r:?}");
    }
}
