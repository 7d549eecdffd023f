//! The network as an ONNX graph: the inference forward pass of
//! [`crate::network::net::FusedNet`] (batch norms folded into the convolutions before them,
//! the training-only heads left out), node for node, with the weights as initializers.
//! Operators (all in the default domain, all unchanged from opset 13 to 17 and beyond):
//! Conv, Relu, Add, GlobalAveragePool, GlobalMaxPool, Concat, Flatten, Gemm, Softmax.

use std::collections::BTreeMap;

use super::proto::{f32_tensor_type, AttributeProto, DimensionValue, GraphProto, NodeProto, TensorProto};
use super::proto::{ValueInfoProto, FLOAT};
use nn::file::tensors::HostTensor;
use nn::network::config::NetConfig;
use nn::network::shape::{NetShape, WDL_LEN};

/// The batch norm epsilon of [`crate::Net`] (tch's default).
const BN_EPS: f64 = 1e-5;

/// Names of the graph's input and outputs (`data/FORMAT.md`, "ONNX files").
pub const INPUT: &str = "planes";
pub const POLICY_OUTPUT: &str = "policy_logits";
pub const WDL_OUTPUT: &str = "wdl";
/// The symbolic first dimension of the input and outputs.
pub const BATCH_DIM: &str = "batch";

/// A network's tensors by name, as f32 values.
pub(super) struct Weights {
    tensors: BTreeMap<String, (Vec<usize>, Vec<f32>)>,
}

impl Weights {
    pub(super) fn new(host: &[HostTensor]) -> Weights {
        let values = |t: &HostTensor| {
            t.bytes.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect::<Vec<f32>>()
        };
        Weights { tensors: host.iter().map(|t| (t.name.clone(), (t.shape.clone(), values(t)))).collect() }
    }

    /// The tensor `name`; the network's own parameter table names every tensor asked for.
    fn get(&self, name: &str) -> (&[usize], &[f32]) {
        let (shape, values) = self.tensors.get(name).unwrap_or_else(|| panic!("the network has tensor {name}"));
        (shape, values)
    }
}

/// Nodes and initializers being collected, in order.
struct Builder<'a> {
    weights: &'a Weights,
    nodes: Vec<NodeProto>,
    initializers: Vec<TensorProto>,
}

impl Builder<'_> {
    /// An initializer `name` holding `values` of dimensions `dims`; returns its name.
    fn initializer(&mut self, name: &str, dims: &[usize], values: &[f32]) -> String {
        self.initializers.push(TensorProto {
            dims: dims.iter().map(|&d| d as i64).collect(),
            data_type: FLOAT,
            name: name.into(),
            raw_data: values.iter().flat_map(|x| x.to_le_bytes()).collect(),
        });
        name.into()
    }

    /// A node `op(inputs)` whose one output (and node name) is `output`; returns `output`.
    fn node(&mut self, op: &str, inputs: &[&str], output: &str, attribute: Vec<AttributeProto>) -> String {
        self.nodes.push(NodeProto {
            input: inputs.iter().map(|s| s.to_string()).collect(),
            output: vec![output.into()],
            name: output.into(),
            op_type: op.into(),
            attribute,
        });
        output.into()
    }

    fn relu(&mut self, x: &str, output: &str) -> String {
        self.node("Relu", &[x], output, Vec::new())
    }

    /// A square stride-1 convolution with "same" zero padding (`k / 2`), as koma's.
    fn conv(&mut self, x: &str, weight: &str, bias: Option<&str>, k: usize, output: &str) -> String {
        let p = (k / 2) as i64;
        let attrs = vec![
            AttributeProto::ints("kernel_shape", &[k as i64, k as i64]),
            AttributeProto::ints("pads", &[p, p, p, p]),
            AttributeProto::ints("strides", &[1, 1]),
        ];
        let inputs: Vec<&str> = std::iter::once(x).chain(std::iter::once(weight)).chain(bias).collect();
        self.node("Conv", &inputs, output, attrs)
    }

    /// The bias-free convolution `<conv>.weight` followed by batch norm `<bn>.*`, folded
    /// into one convolution with bias (initializers `<conv>.weight`, `<conv>.bias`).
    fn conv_bn(&mut self, x: &str, conv: &str, bn: &str) -> String {
        let (shape, w) = self.weights.get(&format!("{conv}.weight"));
        let shape = shape.to_vec();
        let part = |p: &str| self.weights.get(&format!("{bn}.{p}")).1;
        let (gamma, beta, mean, var) = (part("weight"), part("bias"), part("running_mean"), part("running_var"));
        let per_out = w.len() / shape[0];
        let scale: Vec<f64> = (0..shape[0]).map(|o| gamma[o] as f64 / (var[o] as f64 + BN_EPS).sqrt()).collect();
        let folded: Vec<f32> = w.iter().enumerate().map(|(i, &x)| (x as f64 * scale[i / per_out]) as f32).collect();
        let bias: Vec<f32> = (0..shape[0]).map(|o| (beta[o] as f64 - mean[o] as f64 * scale[o]) as f32).collect();
        let w_name = self.initializer(&format!("{conv}.weight"), &shape, &folded);
        let b_name = self.initializer(&format!("{conv}.bias"), &[shape[0]], &bias);
        self.conv(x, &w_name, Some(&b_name), shape[2], conv)
    }

    /// An initializer copied from the network's tensor `name` (optionally reshaped).
    fn copied(&mut self, name: &str, dims: Option<&[usize]>) -> String {
        let (shape, values) = self.weights.get(name);
        let (shape, values) = (dims.unwrap_or(shape).to_vec(), values.to_vec());
        self.initializer(name, &shape, &values)
    }

    /// `x @ weight^T + bias` for the linear layer `<name>.weight` `[out, in]`, `<name>.bias`.
    fn linear(&mut self, x: &str, name: &str) -> String {
        let w = self.copied(&format!("{name}.weight"), None);
        let b = self.copied(&format!("{name}.bias"), None);
        self.node("Gemm", &[x, &w, &b], name, vec![AttributeProto::int("transB", 1)])
    }

    /// Residual block `i` on `x`; returns its output.
    fn block(&mut self, x: &str, i: usize, gpool: bool) -> String {
        let b = format!("blocks.{i}");
        let mut a = self.conv_bn(x, &format!("{b}.conv1"), &format!("{b}.bn1"));
        if gpool {
            let g = self.conv_bn(x, &format!("{b}.gpool.conv"), &format!("{b}.gpool.bn"));
            let g = self.relu(&g, &format!("{b}.gpool.relu"));
            let mean = self.node("GlobalAveragePool", &[&g], &format!("{b}.gpool.mean"), Vec::new());
            let max = self.node("GlobalMaxPool", &[&g], &format!("{b}.gpool.max"), Vec::new());
            let pooled =
                self.node("Concat", &[&mean, &max], &format!("{b}.gpool.pooled"), vec![AttributeProto::int("axis", 1)]);
            // The linear layer [C, 2G] on the [B, 2G, 1, 1] pooled values, as a 1x1
            // convolution: its [B, C, 1, 1] output broadcasts over the board in the Add.
            let name = format!("{b}.gpool.linear.weight");
            let (shape, _) = self.weights.get(&name);
            let dims = [shape[0], shape[1], 1, 1];
            let w = self.copied(&name, Some(&dims));
            let bias = self.conv(&pooled, &w, None, 1, &format!("{b}.gpool.linear"));
            a = self.node("Add", &[&a, &bias], &format!("{b}.biased"), Vec::new());
        }
        let a = self.relu(&a, &format!("{b}.relu1"));
        let y = self.conv_bn(&a, &format!("{b}.conv2"), &format!("{b}.bn2"));
        let y = self.node("Add", &[&y, x], &format!("{b}.residual"), Vec::new());
        self.relu(&y, &format!("{b}.out"))
    }

    /// The policy head on the tower output `x`: logits `[batch, policy_len]`.
    fn policy(&mut self, x: &str) -> String {
        let h = self.conv_bn(x, "policy.conv", "policy.bn");
        let h = self.relu(&h, "policy.relu");
        let w = self.copied("policy.out.weight", None);
        let b = self.copied("policy.out.bias", None);
        let planes = self.conv(&h, &w, Some(&b), 1, "policy.out");
        self.node("Flatten", &[&planes], POLICY_OUTPUT, vec![AttributeProto::int("axis", 1)])
    }

    /// The value head on the tower output `x`: win/draw/loss probabilities `[batch, 3]`.
    fn value(&mut self, x: &str) -> String {
        let v = self.conv_bn(x, "value.conv", "value.bn");
        let v = self.relu(&v, "value.relu");
        let v = self.node("Flatten", &[&v], "value.flat", vec![AttributeProto::int("axis", 1)]);
        let h = self.linear(&v, "value.fc1");
        let h = self.relu(&h, "value.fc1.relu");
        let logits = self.linear(&h, "value.fc2");
        self.node("Softmax", &[&logits], WDL_OUTPUT, vec![AttributeProto::int("axis", 1)])
    }
}

/// The graph of the network `config` x `shape` with these weights.
pub(super) fn build(weights: &Weights, config: &NetConfig, shape: NetShape, name: &str) -> GraphProto {
    let mut g = Builder { weights, nodes: Vec::new(), initializers: Vec::new() };
    let stem = g.conv_bn(INPUT, "stem.conv", "stem.bn");
    let mut x = g.relu(&stem, "stem.relu");
    for i in 0..config.blocks {
        x = g.block(&x, i, config.is_global_pooling_block(i));
    }
    g.policy(&x);
    g.value(&x);
    let batch = || DimensionValue::DimParam(BATCH_DIM.into());
    let fixed = |n: usize| DimensionValue::DimValue(n as i64);
    let value = |name: &str, dims, doc: &str| ValueInfoProto {
        name: name.into(),
        r#type: Some(f32_tensor_type(dims)),
        doc_string: doc.into(),
    };
    let s = shape;
    GraphProto {
        node: g.nodes,
        name: name.into(),
        initializer: g.initializers,
        doc_string: String::new(),
        input: vec![value(
            INPUT,
            vec![batch(), fixed(s.input_planes), fixed(s.board_height), fixed(s.board_width)],
            "encoded positions, [batch, planes, rows, cols], seen from the side to move",
        )],
        output: vec![
            value(
                POLICY_OUTPUT,
                vec![batch(), fixed(s.policy_len())],
                "move logits before softmax, label = plane * rows * cols + row * cols + col",
            ),
            value(WDL_OUTPUT, vec![batch(), fixed(WDL_LEN)], "win, draw, loss probabilities of the side to move"),
        ],
    }
}
