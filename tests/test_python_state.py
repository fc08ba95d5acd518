"""Python state the entry writes while traced: a cache a layer fills on its first call, a
global, a list it appends to, a module's or an object's attribute, a closure's variable,
a dict given as an argument. After tracing the state holds what eager puts there, every
call the trace serves writes it again, and a later call that finds a cache filled reads
it, as a captured input of a trace of its own."""

import json
import textwrap

import pytest
import torch

from tests.test_cli import python_output, write
from tracecli.frontend import state as state_module
from tracecli.frontend.tracer import trace_callable
from tracecli.jobs.compare import compare_kept

# A layer that caches a bias in a dict on its first call in eval mode, as timm's LeViT and
# EfficientFormer do (`self.attention_bias_cache[device_key] = ...`).
CACHING = """
    import torch
    from torch import nn


    class Attention(nn.Module):
        def __init__(self):
            super().__init__()
            self.attention_biases = nn.Parameter(torch.randn(4, 9))
            self.register_buffer("idxs", torch.randint(0, 9, (3, 3)))
            self.attention_bias_cache = {}

        def get_bias(self, device):
            if self.training:
                return self.attention_biases[:, self.idxs]
            key = str(device)
            if key not in self.attention_bias_cache:
                self.attention_bias_cache[key] = self.attention_biases[:, self.idxs]
            return self.attention_bias_cache[key]

        def forward(self, x):
            return x + self.get_bias(x.device)


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.blocks = nn.Sequential(Attention(), Attention())

        def forward(self, x):
            return self.blocks(x)


    if __name__ == "__main__":
        torch.manual_seed(0)
        model = Net().eval()
        for i in range(3):
            out = model(torch.randn(2, 4, 3, 3))
            cache = model.blocks[1].attention_bias_cache
            print(i, round(float(out.detach().sum()), 4), sorted(cache), round(float(cache["cpu"].detach().sum()), 4))
"""

# Every kind of place, written on every call of a main block's loop.
PLACES = """
    import dataclasses

    import torch
    from torch import nn

    CACHE = {}
    HISTORY = []
    LAST = None


    @dataclasses.dataclass
    class Tracker:
        values: list
        last: object = None


    tracker = Tracker([])


    def make_step():
        seen = {}
        latest = None

        def step(x):
            nonlocal latest
            seen["n"] = x * 2
            latest = seen["n"] + 1
            return latest

        return step, seen, lambda: latest


    step, seen, latest = make_step()


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(4, 4)

        def forward(self, x):
            h = self.lin(x)
            self.last_hidden = h
            self.extras = {"act": [h.relu()]}
            return h.sum(-1)


    model = Net()


    def entry(x, out):
        global LAST
        key = tuple(x.shape)
        if key not in CACHE:
            CACHE[key] = x.mean(0)
        HISTORY.append(x.sum())
        LAST = x * 3
        tracker.values.append(x.max())
        tracker.last = x.min()
        out["y"] = x.exp()
        return model(x) + CACHE[key].sum() + step(x).sum()


    def r(t):
        return round(float(t.detach().sum()), 4)


    if __name__ == "__main__":
        torch.manual_seed(0)
        model = Net()
        for i in range(3):
            out = {}
            result = entry(torch.randn(3, 4), out)
            print(i, r(result), len(CACHE), [r(h) for h in HISTORY], r(LAST), [r(v) for v in tracker.values],
                  r(tracker.last), r(seen["n"]), r(latest()), r(model.last_hidden), r(model.extras["act"][0]),
                  r(out["y"]))
"""


def test_a_cache_filled_on_the_first_call_is_read_by_the_next(cli, tmp_path):
    path = write(tmp_path, "caching.py", CACHING)
    result = cli("run", f"{path}:Net", "--depth", "0", "--no-timing")
    assert result.exit_code == 0, result.output
    out = result.stdout
    # The script sees what it sees under Python: the cache holds the bias after each call.
    assert out.splitlines()[:3] == python_output(path)
    first, second = out.split("── trace 2 of 2 · 2 calls: 2-3 ──")
    # The first call fills the cache: the trace stores the bias there, at the line that made it.
    assert '# caching.py:18:  self.attention_bias_cache[key] = self.attention_biases[:, self.idxs]\n' \
           '  ltorch.store_item(blocks_0_attention_bias_cache, "cpu", t3)' in first
    assert "all 2 tensors it keeps in Python state match eager's" in first
    # The next ones find it filled: another trace, which reads the cached bias as it reads a weight.
    assert '# blocks_1_attention_bias_cache_cpu: "cpu f32[4, 3, 3]", captured' in second
    assert "ltorch.getitem" not in second and "store_item" not in second


def test_every_place_a_traced_value_is_written_holds_what_eager_puts_there(cli, tmp_path):
    path = write(tmp_path, "places.py", PLACES)
    expected = python_output(path)
    for executor in ("torch", "prims", "inductor"):
        result = cli("run", f"{path}:entry", "-e", executor, "--depth", "0", "--no-timing")
        assert result.exit_code == 0, result.output
        assert result.stdout.splitlines()[:3] == expected, executor
    for store in ('ltorch.store_item(CACHE, (3, 4), t', "ltorch.store_extend(HISTORY, [t",
                  'ltorch.store_item(globals, "LAST", t', "ltorch.store_extend(tracker_values, [t",
                  'ltorch.store_attr(tracker, "last", t', 'ltorch.store_item(out, "y", t', "ltorch.store_cell(latest, t",
                  'ltorch.store_item(seen, "n", t', 'ltorch.store_attr(model, "last_hidden", t',
                  'ltorch.store_attr(model, "extras", {"act": [t'):
        assert store in result.stdout, store
    # Compared as outputs are: each place, as eager and the trace left it (`out`, given anew
    # to each run, is compared by the later calls' results).
    for row in ("LAST (state)", "CACHE[(3, 4)] (state)", "HISTORY (state)", "tracker.last (state)",
                "latest (state)", "seen['n'] (state)", "model.last_hidden (state)", "model.extras (state)",
                "tracker.values (state)"):
        assert row in result.stdout, row
    # The cache, filled by the first call, is read by the second trace.
    assert '# CACHE_3_4: "cpu f32[4]", captured' in result.stdout


def test_tracing_alone_leaves_the_state_as_it_found_it():
    cache: dict = {}
    log: list = []

    def f(x):
        cache["k"] = x * 2
        log.append(x.sum())
        return cache["k"] + 1

    program = trace_callable(f, (torch.ones(3),))
    assert cache == {} and log == []
    assert [b.symbol.qualname for b in program.trace.bsyms][-2:] == ["ltorch.store_item", "ltorch.store_extend"]
    # A later call is served where the cache still lacks the key; the log may have grown.
    assert [(w.place.path, w.how, w.what) for w in program.writes] == [("cache['k']", "exists", False),
                                                                       ("log", "any", None)]


STEP = """
    import torch
    from torch import nn

    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    history = []
    stats = {}


    def train_step(x, y):
        opt.zero_grad()
        pred = model(x)
        loss = nn.functional.mse_loss(pred, y)
        loss.backward()
        opt.step()
        history.append(loss.detach())
        stats["last_pred"] = pred.detach()
        return loss.detach()


    if __name__ == "__main__":
        torch.manual_seed(0)
        model[0].reset_parameters(); model[2].reset_parameters()
        for step in range(4):
            train_step(torch.randn(4, 8), torch.randn(4, 1))
        print(len(history), [round(float(h), 4) for h in history], round(float(stats["last_pred"].sum()), 4))
"""


def test_a_training_step_that_logs_its_losses_into_a_list(cli, tmp_path):
    path = write(tmp_path, "step.py", STEP)
    result = cli("run", f"{path}:train_step", "--no-timing", "--format", "json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["match"] is True
    state = [row["name"] for row in report["calls"][0]["result"]["state"]]
    assert state == ["history", "stats['last_pred']"]
    assert result.stderr.splitlines()[0] == python_output(path)[0]


BUFFER = """
    import torch
    from torch import nn


    class Counter(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(4, 4)
            self.register_buffer("count", torch.zeros(()))

        def forward(self, x):
            self.count = self.count + 1
            return self.lin(x) * self.count


    if __name__ == "__main__":
        torch.manual_seed(0)
        model = Counter()
        for _ in range(3):
            out = model(torch.ones(2, 4))
        print(float(model.count), round(float(out.detach().sum()), 4))
"""


def test_a_buffer_set_anew_is_the_new_tensor_on_every_call(cli, tmp_path):
    path = write(tmp_path, "buffer.py", BUFFER)
    result = cli("run", f"{path}:Counter", "--depth", "0", "--no-timing")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[0] == python_output(path)[0] == "3.0 " + python_output(path)[0].split()[1]
    assert 'ltorch.store_attr(self, "count", t0)' in result.stdout
    assert "count (state)" in result.stdout


ARGUMENTS = """
    import torch


    def entry(batch, extras):
        batch["pred"] = batch["x"] * 2
        extras["norm"] = batch["x"].norm()
        return batch["pred"].sum()


    if __name__ == "__main__":
        for i in range(3):
            batch, extras = {"x": torch.full((3,), float(i))}, {}
            total = entry(batch, extras)
            print(i, float(total), batch["pred"].tolist(), round(float(extras["norm"]), 4))
"""


def test_containers_given_as_arguments_get_the_values_of_their_own_call(cli, tmp_path):
    path = write(tmp_path, "arguments.py", ARGUMENTS)
    result = cli("run", path, "--depth", "0", "--no-timing")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[:3] == python_output(path)
    assert 'ltorch.store_item(batch, "pred", t0)' in result.stdout
    assert 'ltorch.store_item(extras, "norm", t' in result.stdout


@pytest.mark.parametrize(("source", "line", "message"), [
    ("""
        import torch

        class Box:
            def __init__(self, t):
                self.t = t

        kept = {}

        def f(x):
            kept["box"] = Box(x * 2)
            return x + 1
     """, 11, "a traced tensor is kept in a Box object at `kept['box']`, which the trace cannot make again"),
    ("""
        import torch

        holder = {"a": {"b": {"c": {"d": {}}}}}

        def f(x):
            d = holder["a"]["b"]["c"]["d"]
            if "e" not in d:
                d["e"] = x * 2
            return d["e"] + 1
     """, 9, "a tensor made while tracing was kept in Python state tracecli does not look into"),
], ids=["inside-a-plain-object", "too-deep"])
def test_state_the_trace_cannot_keep_right_is_refused_at_its_line(cli, tmp_path, source, line, message):
    main = "if __name__ == '__main__':\n    f(torch.ones(2))\n    f(torch.ones(2))\n"
    path = write(tmp_path, "refused.py", textwrap.dedent(source) + main)
    result = cli("run", path)
    assert result.exit_code == 2, result.output
    assert f"refused.py:{line}: {message}" in result.output


KEPT = """
    import torch

    kept = {}


    def f(x, w):
        h = torch.tanh(x @ w)
        kept["h"] = h
        return h.sum()


    def sample_inputs(device):
        return (torch.randn(3, 4), torch.randn(4, 2, requires_grad=True))
"""


@pytest.mark.parametrize("options", [("--grad",), ("--dynamic",), ("-p", "dce,cse,rename,renumber,fuse,lower")],
                         ids=["grad", "dynamic", "passes"])
def test_state_writes_with_gradients_symbolic_sizes_and_passes(cli, tmp_path, options):
    path = write(tmp_path, "kept.py", KEPT)
    result = cli("run", path, *options, "--no-timing", "--format", "json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["match"] is True
    text = report["calls"][0]["trace"]["text"]
    assert 'store_item(kept, "h", ' in text
    assert [row["name"] for row in report["calls"][0]["result"]["state"]] == ["kept['h']"]


COUNTING = """
    import torch
    from torch import nn

    step = 0
    history = []


    class Lazy(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(3, 3)
            self.ready = False
            self.stale = {"old": 1}

        def forward(self, x):
            if not self.ready:
                self.ready = True
                self.stale.pop("old")
                self.scale = 2.0
            return self.lin(x) * self.scale


    model = Lazy()


    def f(x):
        global step
        step += 1
        history.append(step)
        return model(x) * step


    if __name__ == "__main__":
        torch.manual_seed(0)
        model.lin.reset_parameters()
        for _ in range(3):
            out = f(torch.ones(2, 3))
            print(step, history, model.ready, model.stale, round(float(out.detach().sum()), 4))
"""


def test_python_values_the_entry_changes_are_replayed_and_guarded(cli, tmp_path):
    # The trace sets what the call set (a counter, a flag a first call raises, a removed
    # entry), and serves a later call only where it finds those as the traced call did:
    # the counter's next value is another trace; the flag raised, another, once.
    path = write(tmp_path, "counting.py", COUNTING)
    result = cli("run", f"{path}:f", "--depth", "0", "--no-timing")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[:3] == python_output(path)
    assert 'ltorch.store_item(globals, "step", 1)' in result.stdout
    assert "ltorch.store_extend(history, [1])" in result.stdout
    assert 'ltorch.store_attr(model, "ready", True)' in result.stdout
    assert 'ltorch.delete_item(model_stale, "old")' in result.stdout
    assert "f: 3 calls, 3 distinct traces" in result.stdout


DECODE = """
    import torch
    from transformers import DynamicCache, LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    config = LlamaConfig(
        num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, hidden_size=64, intermediate_size=128,
        vocab_size=256, max_position_embeddings=64, bos_token_id=0, eos_token_id=0, pad_token_id=0,
    )
    model = LlamaForCausalLM(config).eval()


    def step(ids, cache):
        out = model(ids, past_key_values=cache, use_cache=True)
        return out.logits[:, -1].argmax(-1, keepdim=True)


    if __name__ == "__main__":
        torch.manual_seed(1)
        ids = torch.randint(0, 256, (1, 5))
        cache = DynamicCache(config=config)
        tokens = []
        with torch.no_grad():
            nxt = step(ids, cache)
            for _ in range(3):
                tokens.append(int(nxt))
                nxt = step(nxt, cache)
        print(tokens, cache.get_seq_length())
"""


def test_greedy_decoding_with_a_hugging_face_cache_given_as_an_argument(cli, tmp_path):
    # Each step writes the cache's keys and values (and its first, the layers' lazy
    # initialisation): replayed by each trace, and each next step, which finds the cache
    # grown, is a trace of its own reading it.
    path = write(tmp_path, "decode.py", DECODE)
    result = cli("run", f"{path}:step", "--depth", "0", "--no-timing")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[0] == python_output(path)[0]
    assert 'ltorch.store_attr(cache_layers_0, "is_initialized", True)' in result.stdout
    assert 'ltorch.store_attr(cache_layers_1, "keys", t' in result.stdout
    assert "step: 4 calls, 4 distinct traces" in result.stdout


def test_a_dict_whose_getitem_makes_something_else_is_put_back_as_it_held_it():
    # transformers' ACT2FN holds classes and hands out instances of them: what tracing
    # looks at and puts back is what the dict holds.
    class Instantiating(dict):
        def __getitem__(self, key):
            return super().__getitem__(key)()

    registry = Instantiating(relu=torch.nn.ReLU)
    cache: dict = {}

    def f(x):
        cache["act"] = registry["relu"]
        return cache["act"](x) + 1

    trace_callable(f, (torch.ones(3),))
    assert dict.get(registry, "relu") is torch.nn.ReLU and cache == {}


def test_an_optimizer_given_as_an_argument_is_left_to_the_training_support():
    # Its state is the training support's to name, read and put back: not a place of
    # Python state the trace replays (which would tie each trace to one step's moments).
    model = torch.nn.Linear(4, 2)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.1)

    def step(model, optimizer, x):
        optimizer.zero_grad()
        model(x).square().mean().backward()
        optimizer.step()

    program = trace_callable(step, (model, optimizer, torch.ones(3, 4)))
    assert not any(w.place.path.startswith("optimizer") for w in program.writes)


FUNCTION_STATE = """
    import torch

    KEPT = {}


    class Keep(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            KEPT["inner"] = x.exp()
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2


    def f(x):
        return Keep.apply(x) + 1


    if __name__ == "__main__":
        for i in range(2):
            f(torch.full((2,), float(i)))
            print(KEPT["inner"].tolist())
"""


def test_state_a_custom_functions_forward_writes(cli, tmp_path):
    # The forward is the script's code the entry reaches through the class it names.
    path = write(tmp_path, "function_state.py", FUNCTION_STATE)
    result = cli("run", path, "--depth", "0", "--no-timing")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[:2] == python_output(path)
    assert 'ltorch.store_item(KEPT, "inner", t' in result.stdout


LIBRARY_FLAG = """
    import torch
    from lib.layers import Hooked

    model = Hooked()


    def f(x):
        return model(x)


    if __name__ == "__main__":
        for _ in range(2):
            print(f(torch.ones(2, 3)).tolist(), model.hook_calls)
"""

LIBRARY = """
    import torch


    class Hooked(torch.nn.Module):
        # As transformers' output capturing: a hook installed on the first call, and a flag.
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(3, 3)
            self.hook_calls = 0

        def forward(self, x):
            if not getattr(self, "_hooks_installed", False):
                self.lin.register_forward_hook(self._count)
                self._hooks_installed = True
            return self.lin(x).relu()

        def _count(self, module, args, out):
            self.hook_calls += 1
"""


def test_a_librarys_own_bookkeeping_is_left_as_the_call_left_it(cli, tmp_path, monkeypatch):
    # The flag goes with hooks tracing does not put back: putting the flag back alone made
    # eager install the hooks twice.
    site = tmp_path / "site"
    (site / "lib").mkdir(parents=True)
    (site / "lib" / "__init__.py").write_text("")
    (site / "lib" / "layers.py").write_text(textwrap.dedent(LIBRARY))
    monkeypatch.setattr(state_module, "is_program_path", lambda path: str(site) not in path)
    monkeypatch.syspath_prepend(str(site))
    path = write(tmp_path, "uses_lib.py", LIBRARY_FLAG)
    result = cli("run", path, "--depth", "0", "--no-timing")
    assert result.exit_code == 0, result.output
    assert "_hooks_installed" not in result.stdout


CLASS_STATE = """
    import torch
    from torch import nn


    class Block(nn.Module):
        calls = 0
        shared = None

        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(3, 3)

        def forward(self, x):
            type(self).calls += 1
            if Block.shared is None:
                Block.shared = self.lin.weight.t().contiguous()
            return x @ Block.shared


    model = Block()


    def f(x):
        return model(x)


    if __name__ == "__main__":
        torch.manual_seed(0)
        model.lin.reset_parameters()
        for _ in range(3):
            out = f(torch.ones(2, 3))
        print(Block.calls, round(float(out.detach().sum()), 4), round(float(Block.shared.detach().sum()), 4))
"""


def test_the_programs_class_attributes_are_state_too(cli, tmp_path):
    path = write(tmp_path, "class_state.py", CLASS_STATE)
    result = cli("run", f"{path}:f", "--depth", "0", "--no-timing")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[0] == python_output(path)[0]
    assert 'ltorch.store_attr(Block, "shared", t' in result.stdout
    assert 'ltorch.store_attr(Block, "calls", 1)' in result.stdout


LOGGED_STEP = """
    import dataclasses

    import torch
    from torch import nn


    @dataclasses.dataclass
    class Stats:
        losses: list


    def train_step(model, opt, x, y, stats):
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        stats.losses.append(loss.detach())
        return loss.detach()


    if __name__ == "__main__":
        torch.manual_seed(0)
        model = nn.Linear(16, 3)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        stats = Stats([])
        for _ in range(3):
            train_step(model, opt, torch.randn(4, 16), torch.randint(0, 3, (4,)), stats)
        print([round(float(loss), 4) for loss in stats.losses])
"""


def test_a_training_step_appending_to_a_container_it_is_given(cli, tmp_path):
    # The check reads the call's inputs before the call: the loss it appends would be one
    # more input afterwards, and every gradient was compared with the wrong one.
    path = write(tmp_path, "logged_step.py", LOGGED_STEP)
    result = cli("run", f"{path}:train_step", "--no-timing", "--format", "json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["match"] is True
    assert result.stderr.splitlines()[0] == python_output(path)[0]


class _Node:
    def __init__(self, value):
        self.value, self.parent, self.children = value, None, []


def _tree(value):
    root, leaf = _Node(torch.tensor(1.0)), _Node(value)
    leaf.parent = root
    root.children.append(leaf)
    return root


def test_state_whose_objects_refer_back_to_each_other_is_compared_without_end():
    # A GradScaler's per-optimizer state, a module tree with parent links: each object
    # reached again is as alike as the rest of the comparison finds.
    (same,) = compare_kept("tree", _tree(torch.tensor(2.0)), _tree(torch.tensor(2.0)), False)
    (other,) = compare_kept("tree", _tree(torch.tensor(2.0)), _tree(torch.tensor(3.0)), False)
    assert same.match and not other.match
