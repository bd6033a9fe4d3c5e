"""The demo (opdispatch.demo and `python -m opdispatch demo`): training the MLP
lowers the loss, the op counter counts calls inside the dispatcher, the meta
pass gives every stage's shape, and the command exits 0 above 90% accuracy.

The example extension is compiled once per module into a temporary cache, in
namespace myext_demo (test_cpp_extension.py loads the example as myext and
myext_jit in this process); the subprocess reuses that build.
"""
from __future__ import annotations

import io
import os
import re
import subprocess
import sys

import numpy as np
import pytest

import opdispatch
from opdispatch import _C
from opdispatch.demo import cnn, data, extension, model, run
from opdispatch.demo.opcount import OpCounter, counting_overhead
from opdispatch.demo.progress import EpochProgress

NS = "myext_demo"
SKLEARN_REASON = "the demo's data set comes from scikit-learn, which is not installed (pip install '.[demo]')"


@pytest.fixture(scope="module")
def extensions_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("demo_extensions")


@pytest.fixture(scope="module")
def ext(extensions_dir) -> extension.DemoExtension:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("OPDISPATCH_EXTENSIONS_DIR", str(extensions_dir))
        return extension.load_extension(NS)


@pytest.fixture(scope="module")
def digits() -> data.Digits:
    pytest.importorskip("sklearn", reason=SKLEARN_REASON)
    return data.load_digits(seed=0)


def new_model(ext, digits, seed=0, hidden=32) -> model.MLP:
    opdispatch.manual_seed(seed)
    return model.MLP.create(digits.n_features, hidden, digits.n_classes, ext.relu)


def test_example_sources_ship_with_the_package():
    sources = extension.example_sources()
    assert sources[0].parent == extension.SOURCE_DIRS[0]  # the installed copy, not the source tree
    assert {"ops.cpp", "cpu_kernels.cpp", "meta_kernels.cpp"} <= {s.name for s in sources}


def test_relu_from_the_extension_has_a_correct_gradient(ext):
    x = opdispatch.tensor([[-1.5, 0.5, 2.0], [0.25, -0.75, 3.0]], dtype=opdispatch.float64, requires_grad=True)
    assert opdispatch.autograd.gradcheck(ext.relu, (x,))
    y = ext.relu(x)
    assert y.grad_fn is not None and y.grad_fn.name().startswith(f"{NS}::relu")


def test_training_lowers_the_loss_and_learns_the_digits(ext, digits):
    mlp = new_model(ext, digits)
    optimizer = model.SGD(mlp.parameters(), lr=0.1)
    rng = np.random.default_rng(0)
    losses = [model.train_epoch(mlp, optimizer, digits, 32, rng) for _ in range(4)]
    assert losses[0] < np.log(10)  # below chance level already after the first epoch
    assert losses[-1] < losses[1] < losses[0] and losses[-1] < 0.5 * losses[0]
    assert model.evaluate(mlp, digits.x_test, digits.y_test) >= 0.90


def test_training_is_deterministic_for_a_seed(ext, digits):
    def first_epoch(seed):
        mlp = new_model(ext, digits, seed)
        loss = model.train_epoch(mlp, model.SGD(mlp.parameters(), lr=0.1), digits, 64, np.random.default_rng(seed))
        return loss, mlp.output.weight.detach().numpy().copy()

    (loss_a, w_a), (loss_b, w_b), (loss_c, _) = first_epoch(3), first_epoch(3), first_epoch(4)
    assert loss_a == loss_b and np.array_equal(w_a, w_b)
    assert loss_a != loss_c


def test_progress_bar_redraws_on_a_terminal_and_writes_one_line_otherwise():
    live, log = io.StringIO(), io.StringIO()
    for stream, is_live in ((live, True), (log, False)):
        bar = EpochProgress(stream, 2, 10, 4, is_live)
        for i in range(1, 5):
            bar.update(i, 1.0 / i)
        bar.finish("  0.10 s")
    assert live.getvalue().count("\r") == 5 and live.getvalue().endswith("4/4  loss 0.2500  0.10 s\n")
    assert "epoch  2/10 [##############################] 4/4" in live.getvalue()
    assert log.getvalue() == "epoch  2/10  4/4 batches  loss 0.2500  0.10 s\n"


# --- the op counter ----------------------------------------------------------------------------------


def test_op_counter_counts_the_calls_of_a_forward_and_backward_pass(ext, digits):
    mlp = new_model(ext, digits)
    x = _C.from_numpy(digits.x_train[:16])
    labels = _C.from_numpy(digits.y_train[:16])
    with opdispatch.autograd.no_grad(), OpCounter() as counter:
        logits = mlp(x)
    assert logits.shape == (16, digits.n_classes)
    assert {name: s.calls for name, s in counter.stats.items()} == {
        "od::mm": 2, "od::add.Tensor": 2, f"{NS}::relu": 1}
    assert counter.calls == 5 and counter.nested_calls == 0

    with OpCounter() as counter:
        model.cross_entropy(mlp(x), labels).backward()
    # 2 in the forward pass; backward: dW2 and dh of the output layer, dW1 of the hidden one (x needs no grad)
    assert counter.stats["od::mm"].calls == 5
    # nll_loss is CompositeImplicitAutograd (as in PyTorch): on logits that require grad it decomposes into
    # nll_loss_forward above the counter's key, and backward runs nll_loss_backward.
    assert counter.stats[f"{NS}::relu"].calls == 1 and counter.stats["od::nll_loss_forward"].calls == 1
    assert counter.stats["od::nll_loss_backward"].calls == 1
    for s in counter.stats.values():
        assert 0 < s.self_ns <= s.total_ns


def test_op_counter_times_nested_calls_once(ext):
    t = opdispatch.ones(3, 4)
    with OpCounter() as counter:
        t.to(opdispatch.float64)  # od::to.dtype_layout decomposes into od::_to_copy, a nested call
    to, copy = counter.stats["od::to.dtype_layout"], counter.stats["od::_to_copy"]
    assert to.calls == copy.calls == 1 and counter.nested_calls == 1
    assert copy.self_ns == copy.total_ns and to.total_ns >= copy.total_ns
    assert to.self_ns == to.total_ns - copy.total_ns
    assert counter.self_ns == to.total_ns


def test_op_counter_is_off_outside_its_block_and_leaves_no_mode():
    t = opdispatch.ones(2)
    with OpCounter() as counter:
        t + t
        assert _C._len_torch_dispatch_stack() == 1
    t + t
    assert counter.calls == 1 and counter.table()[1].split()[:2] == ["od::add.Tensor", "1"]
    assert _C._len_torch_dispatch_stack() == 0
    assert not _C._dispatch_tls_is_dispatch_key_included(_C.DispatchKey.Python)


def test_op_counters_nest_and_each_counts_what_reaches_it():
    t = opdispatch.ones(3, 4)
    with OpCounter() as outer:
        with OpCounter() as inner:
            t.to(opdispatch.float64)
        t + t
    # The inner counter calls the kernels below the Python key itself: what it counts skips the outer one.
    assert {n: s.calls for n, s in inner.stats.items()} == {"od::to.dtype_layout": 1, "od::_to_copy": 1}
    assert {n: s.calls for n, s in outer.stats.items()} == {"od::add.Tensor": 1}


def test_counting_overhead_measures_both_ways():
    t = opdispatch.ones(8, 8)
    plain, counted, calls = counting_overhead(lambda: t.mm(t).sum(), repeats=2)
    assert calls == 2 and plain > 0 and counted > 0


# --- the meta pass ------------------------------------------------------------------------------------


def test_meta_pass_gives_every_stage_shape_without_data(ext, digits):
    stages = model.meta_shapes(new_model(ext, digits, hidden=48), batch_size=7)
    assert [(name, tuple(t.shape)) for name, t in stages] == [
        ("input", (7, 64)),
        ("hidden, pre-activation (x @ W1 + b1)", (7, 48)),
        (f"hidden, post-activation ({NS}::relu)", (7, 48)),
        ("logits (h @ W2 + b2)", (7, 10)),
        ("loss (log_softmax, nll_loss)", ()),
        ("gradient of W1", (64, 48)),
        ("gradient of b1", (48,)),
        ("gradient of W2", (48, 10)),
        ("gradient of b2", (10,)),
    ]
    assert all(t.is_meta and t.dtype == opdispatch.float32 for _, t in stages)


# --- the command ------------------------------------------------------------------------------------


def demo_command(extensions_dir, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, OPDISPATCH_EXTENSIONS_DIR=str(extensions_dir))
    return subprocess.run([sys.executable, "-m", "opdispatch", "demo", "--extension-namespace", NS, *args],
                          capture_output=True, text=True, env=env, timeout=300)


def test_demo_command_trains_to_90_percent_and_reports(ext, digits, extensions_dir):
    r = demo_command(extensions_dir, "--epochs", "5", "--seed", "1")
    assert r.returncode == 0, r.stdout + r.stderr
    out = r.stdout
    assert "loaded from the cache" in out  # the module's build: no compiler ran
    assert len(re.findall(r"^epoch [ 1-5]/5  45/45 batches  loss \d\.\d{4}  \d+\.\d\d s$", out, re.M)) == 5
    accuracy = float(re.search(r"^Held-out accuracy: (\d+\.\d)%", out, re.M).group(1))
    assert accuracy >= 90.0
    calls = int(re.search(r"^Operator calls through the dispatcher during training: ([\d,]+)", out, re.M)
                .group(1).replace(",", ""))
    mm = re.search(r"^  od::mm +([\d,]+) ", out, re.M)
    assert mm is not None and int(mm.group(1).replace(",", "")) == 5 * 45 * 5  # 5 per step
    assert re.search(rf"^  {NS}::relu +225 ", out, re.M) and calls > 5 * 45 * 20  # 1 per step
    assert "Counting overhead, measured:" in out
    assert re.search(rf"^  hidden, post-activation \({NS}::relu\) +\[32, 64\] +float32 meta$", out, re.M)
    assert re.search(r"^  loss \(log_softmax, nll_loss\) +\[\] +float32 meta$", out, re.M)


def test_demo_fails_below_90_percent(ext, digits, capsys):
    out = io.StringIO()
    assert run(epochs=1, lr=1e-4, quiet=True, extension_namespace=NS, stream=out) == 1
    assert "error: the held-out accuracy" in capsys.readouterr().err
    assert "Held-out accuracy:" in out.getvalue() and "Meta pass" in out.getvalue()


def test_demo_without_scikit_learn_exits_2_with_the_install_command():
    code = "import sys; sys.modules['sklearn'] = None; from opdispatch.__main__ import main; sys.exit(main(['demo']))"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and r.stdout == ""
    assert 'pip install "opdispatch[demo]"' in r.stderr


def test_demo_command_rejects_bad_options_with_exit_2(capsys):
    from opdispatch.__main__ import main

    for args in (["--epochs", "0"], ["--lr", "-1"], ["--batch-size", "x"]):
        with pytest.raises(SystemExit) as e:
            main(["demo", *args])
        assert e.value.code == 2 and f"argument {args[0]}" in capsys.readouterr().err


# --- the convolutional network (--model cnn) -----------------------------------------------------------


def test_cnn_learns_the_digits_in_two_epochs(digits):
    opdispatch.manual_seed(0)
    net = cnn.CNN.create(digits.n_classes)
    optimizer = model.SGD(net.parameters(), lr=0.05)
    rng = np.random.default_rng(0)
    running_mean = net.blocks[0].running_mean.numpy().copy()
    losses = [model.train_epoch(net, optimizer, digits, 32, rng) for _ in range(2)]
    assert losses[0] < np.log(10) and losses[1] < 0.5 * losses[0]
    assert not np.array_equal(net.blocks[0].running_mean.numpy(), running_mean)  # batch norm updated its statistics
    assert model.evaluate(net, digits.x_test, digits.y_test) >= 0.90
    assert not net.training  # evaluate leaves the model in evaluation mode


def test_cnn_evaluation_mode_is_deterministic_and_training_mode_drops(digits):
    opdispatch.manual_seed(0)
    net = cnn.CNN.create(digits.n_classes, dropout=0.5)
    x = _C.from_numpy(digits.x_test[:8])
    with opdispatch.autograd.no_grad():
        net.eval()
        assert np.array_equal(net(x).numpy(), net(x).numpy())
        net.train()
        assert not np.array_equal(net(x).numpy(), net(x).numpy())  # dropout draws a new mask per call


def test_cnn_meta_pass_gives_every_stage_shape(digits):
    opdispatch.manual_seed(0)
    stages = dict((name, tuple(t.shape)) for name, t in model.meta_shapes(cnn.CNN.create(10), batch_size=5))
    assert stages["as images (view)"] == (5, 1, 8, 8)
    assert stages["block 1: max_pool2d (2x2)"] == (5, 16, 4, 4)
    assert stages["block 2: conv2d (3x3, padding 1)"] == (5, 32, 4, 4)
    assert stages["flatten"] == (5, 128) and stages["logits (linear)"] == (5, 10)
    assert stages["gradient of conv2.weight"] == (32, 16, 3, 3) and stages["gradient of bn1.bias"] == (16,)


def test_demo_command_trains_the_cnn_to_97_percent(digits):
    r = subprocess.run([sys.executable, "-m", "opdispatch", "demo", "--model", "cnn"], capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    out = r.stdout
    assert len(re.findall(r"^epoch +\d+/12  45/45 batches  loss \d\.\d{4}  \d+\.\d\d s$", out, re.M)) == 12
    assert float(re.search(r"^Held-out accuracy: (\d+\.\d)%", out, re.M).group(1)) >= 97.0
    steps = 12 * 45  # two convolution blocks per step, one dropout and one linear layer
    calls = {"od::convolution": 2 * steps, "od::convolution_backward": 2 * steps,
             "od::_native_batch_norm_legit": 2 * steps, "od::native_batch_norm_backward": 2 * steps,
             "od::max_pool2d_with_indices": 2 * steps, "od::native_dropout": steps, "od::addmm": steps}
    for op, n in calls.items():
        assert re.search(rf"^  {op} +{n:,} ", out, re.M), op
    assert re.search(r"^  block 2: max_pool2d \(2x2\) +\[32, 32, 2, 2\] +float32 meta$", out, re.M)
    assert "C++ extension" not in out  # the CNN needs no compiler


def test_demo_rejects_an_unknown_model():
    with pytest.raises(ValueError, match="unknown demo model 'rnn'"):
        run(model_name="rnn")
