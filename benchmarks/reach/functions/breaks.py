"""Python that reads a tensor's value, written the way training and inference scripts
write it: logging loss.item() and f"{loss:.4f}", a branch or a loop on a metric, .tolist()
and int() of a count used as a size, greedy decoding with .item() of the argmax, numpy
round trips, boolean-mask indexing, torch.nonzero and torch.unique, printing a tensor, a
small training step on a model built at import time, RAdam's step and a
torch.distributions check. Each is a graph break for tracecli and for torch.compile."""

import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


def case(inputs, kwargs=dict):
    """Marks a case: `inputs()` makes its positional arguments, `kwargs()` its keyword ones."""
    def mark(fn):
        fn.case_inputs = lambda: (inputs(), kwargs())
        return fn
    return mark


def randn(*shape, **options):
    return torch.randn(*shape, **options)


def labels(n, classes):
    return torch.randint(0, classes, (n,))


log_lines = []


def log(message):
    log_lines.append(message)


# -- logging a value -------------------------------------------------------------------

@case(lambda: (randn(8, 4), randn(4, 1), randn(8, 1)))
def log_loss_item(x, w, y):
    """loss.item() kept for a log line, the loss returned"""
    pred = x @ w
    loss = F.mse_loss(pred, y)
    log(f"step loss {loss.item():.4f}")
    return loss


@case(lambda: (randn(8, 4), randn(4, 3), labels(8, 3)))
def fstring_of_loss(x, w, target):
    """f"{loss:.4f}" of the tensor itself, then more ops after the log line"""
    logits = x @ w
    loss = F.cross_entropy(logits, target)
    line = f"loss={loss:.4f}"
    log(line)
    return loss * 2, logits.softmax(-1)


@case(lambda: (randn(8, 4), randn(4, 3), labels(8, 3)))
def metrics_dict_of_items(x, w, target):
    """a dict of metrics, {k: v.item() for k, v in metrics.items()}, returned with the loss"""
    logits = x @ w
    loss = F.cross_entropy(logits, target)
    acc = (logits.argmax(dim=1) == target).float().mean()
    metrics = {"loss": loss, "acc": acc, "logit_norm": logits.norm()}
    scalars = {k: v.item() for k, v in metrics.items()}
    return loss, scalars


@case(lambda: (randn(16, 5), labels(16, 5)))
def accuracy_percent(logits, target):
    """accuracy as a Python float: 100.0 * correct.sum().item() / target.size(0)"""
    correct = logits.argmax(1).eq(target)
    acc = 100.0 * correct.sum().item() / target.size(0)
    return F.cross_entropy(logits, target), acc


@case(lambda: (randn(3, 4),))
def print_tensor(x):
    """print(tensor) in the middle of the function"""
    h = torch.tanh(x)
    print("activations:", h)
    return h * 2


@case(lambda: ([randn(4, 3) for _ in range(4)], randn(3, 1)))
def running_average_of_items(batches, w):
    """total += loss.item() over a list of batches, the average returned with the last loss"""
    total = 0.0
    for batch in batches:
        loss = (batch @ w).pow(2).mean()
        total += loss.item()
    return loss, total / len(batches)


# -- branching and looping on a value ---------------------------------------------------

@case(lambda: (randn(8, 4), randn(4, 1), randn(8, 1)))
def isfinite_guard(x, w, y):
    """if not torch.isfinite(loss): return early, as a training step skips a bad batch"""
    loss = F.mse_loss(x @ w, y)
    if not torch.isfinite(loss):
        return torch.zeros((), dtype=x.dtype)
    return loss * 0.5


@case(lambda: (randn(6),))
def ternary_on_mean(x):
    """y = x if x.mean() > 0 else -x"""
    y = x if x.mean() > 0 else -x
    return y.exp()


@case(lambda: (torch.rand(4, 4) + 0.5,))
def assert_on_tensor(x):
    """assert (x > 0).all(), "..." before taking a log"""
    assert (x > 0).all(), "inputs must be positive"
    return x.log().sum(0)


def check_range(t, limit=10.0):
    """A helper that validates what it is given by reading its values."""
    if t.abs().max() > limit:
        raise ValueError(f"value out of range: {t.abs().max().item()}")
    return t


@case(lambda: (randn(4, 3), randn(3, 3)))
def read_inside_helper(x, w):
    """a helper function called in the middle branches on t.abs().max()"""
    h = check_range(x @ w)
    return F.relu(h) + 1


@case(lambda: (torch.tensor([2.0, 3.0, 10.0]),))
def while_err_above_tol(a):
    """Newton's iteration for sqrt(a): while err > tol"""
    x = a.clone()
    err = torch.tensor(1.0)
    tol = 1e-6
    steps = 0
    while err > tol:
        nxt = 0.5 * (x + a / x)
        err = (nxt - x).abs().max()
        x = nxt
        steps += 1
    return x, steps


@case(lambda: (randn(5), torch.tensor([1.0, -2.0, 0.5, 3.0, -1.0])))
def early_exit_on_metric(w, target):
    """gradient descent on a quadratic that breaks when the error is under a threshold"""
    for step in range(50):
        err = w - target
        if err.pow(2).mean() < 1e-3:
            break
        w = w - 0.3 / (1 + 0.01 * step) * err
    return w, step


@case(lambda: (torch.tensor([2.0, 1.5, 1.2, 1.1, 1.15, 1.3]),))
def early_stopping_patience(val_losses):
    """best = float("inf"); a patience counter on val_loss < best, stopping after 2 bad epochs"""
    best, bad = float("inf"), 0
    history = []
    for epoch in range(len(val_losses)):
        val_loss = val_losses[epoch] * 2
        history.append(val_loss)
        if val_loss < best:
            best, bad = val_loss.item(), 0
        else:
            bad += 1
            if bad >= 2:
                break
    return torch.stack(history), best, epoch


# -- values as Python numbers and sizes ---------------------------------------------------

@case(lambda: (randn(4), torch.tensor([0.5, 1.0, 2.0])))
def for_over_tolist(x, scales):
    """for s in scales.tolist(): a sum of x * s"""
    out = torch.zeros_like(x)
    for s in scales.tolist():
        out = out + x * s
    return out


@case(lambda: (randn(10),))
def int_of_count_as_size(x):
    """n = int((x > 0).sum()) as the size of a new tensor"""
    n = int((x > 0).sum())
    return torch.ones(n) * x.max(), n


@case(lambda: (randn(10), randn(10)))
def range_of_int_count(x, y):
    """for i in range(int(mask.sum())): a loop as long as a count"""
    mask = x > 0
    acc = y.clone()
    for i in range(int(mask.sum())):
        acc = acc * 0.9 + i
    return acc


@case(lambda: (randn(6, 4),))
def float_of_max_as_scale(x):
    """scale = float(x.abs().max()); x / scale, as quantization scripts compute a scale"""
    scale = float(x.abs().max()) / 127.0
    q = torch.clamp(torch.round(x / scale), -127, 127)
    return q * scale


@case(lambda: (randn(3), torch.tensor([1, 3, 2])))
def int_of_max_as_repeat(x, counts):
    """repeats = int(counts.max()) passed to Tensor.repeat"""
    repeats = int(counts.max())
    return x.repeat(repeats)


CLASSES = ["cat", "dog", "bird", "fish"]


@case(lambda: (randn(2, 8), randn(8, 4)))
def argmax_to_class_name(x, w):
    """CLASSES[logits.argmax().item()]: a prediction as a label string"""
    logits = (x @ w).mean(0)
    return CLASSES[logits.argmax().item()], logits.softmax(-1)


# -- decoding ----------------------------------------------------------------------------

class TinyLM(nn.Module):
    def __init__(self, vocab=11, width=8):
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        self.head = nn.Linear(width, vocab)

    def forward(self, tokens):
        return self.head(torch.tanh(self.embed(tokens).mean(0)))


torch.manual_seed(0)
LM = TinyLM().eval()


@case(lambda: (torch.tensor([1, 4]),))
def greedy_decode(prompt):
    """greedy decoding: next_id = logits.argmax().item() appended to a list, stop at EOS"""
    eos = 0
    tokens = prompt.tolist()
    with torch.no_grad():
        for _ in range(6):
            logits = LM(torch.tensor(tokens))
            next_id = logits.argmax().item()
            tokens.append(next_id)
            if next_id == eos:
                break
    return torch.tensor(tokens)


@case(lambda: (randn(12),))
def topk_item_loop(scores):
    """top-k: [(i.item(), v.item()) for v, i in zip(*torch.topk(probs, 3))]"""
    probs = scores.softmax(-1)
    values, indices = torch.topk(probs, 3)
    best = [(i.item(), round(v.item(), 4)) for v, i in zip(values, indices)]
    return probs, best


# -- numpy round trips ----------------------------------------------------------------------

@case(lambda: (randn(5, 3),))
def numpy_standardize(x):
    """a = x.numpy(); (a - a.mean(0)) / a.std(0); torch.from_numpy back, then more ops"""
    a = x.detach().numpy()
    z = (a - a.mean(axis=0)) / (a.std(axis=0) + 1e-5)
    return torch.from_numpy(z.astype(np.float32)) * 2 + x


@case(lambda: (randn(20),))
def numpy_percentile_clip(x):
    """thr = np.percentile(x.abs().numpy(), 90); x.clamp(-thr, thr)"""
    thr = float(np.percentile(x.abs().numpy(), 90))
    return x.clamp(-thr, thr)


@case(lambda: (randn(6), randn(6, 2)))
def numpy_argsort_reorder(scores, x):
    """order = np.argsort(-scores.numpy()); x[torch.from_numpy(order)]"""
    order = np.argsort(-scores.numpy(), kind="stable")
    return x[torch.from_numpy(order)]


# -- sizes that are the data's ----------------------------------------------------------------

@case(lambda: (randn(10),))
def boolean_mask_index(x):
    """x[x > 0].mean(): a boolean mask as an index"""
    pos = x[x > 0]
    return pos.mean(), pos.numel()


@case(lambda: (randn(8, 3), labels(8, 2)))
def nonzero_rows(x, y):
    """idx = torch.nonzero(y == 1).squeeze(1); x[idx].sum(0)"""
    idx = torch.nonzero(y == 1).squeeze(1)
    return x[idx].sum(0) * 2


@case(lambda: (randn(10, 3), labels(10, 4)))
def unique_class_means(x, y):
    """per-class means over torch.unique(y), stacked"""
    means = [x[y == c].mean(0) for c in torch.unique(y)]
    return torch.stack(means)


@case(lambda: (randn(4, 5),))
def masked_select_sum(x):
    """torch.masked_select(x, x > 0.5) summed"""
    picked = torch.masked_select(x, x > 0.5)
    return picked.sum() + x.mean()


@case(lambda: (labels(12, 5),))
def bincount_histogram(y):
    """class weights from torch.bincount(y): its length is the data's largest label"""
    counts = torch.bincount(y).float()
    return counts.sum() / (counts + 1)


# -- a training step ---------------------------------------------------------------------------

torch.manual_seed(0)
NET = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
SGD = torch.optim.SGD(NET.parameters(), lr=0.1)
RADAM_NET = nn.Linear(4, 1)
RADAM = torch.optim.RAdam(RADAM_NET.parameters(), lr=0.01)


def radam_warmup(steps=2):
    """The steps a training loop has run before: RAdam's step count is then a tensor of
    its state that its next step reads."""
    for _ in range(steps):
        RADAM.zero_grad()
        F.mse_loss(RADAM_NET(torch.ones(2, 4)), torch.zeros(2, 1)).backward()
        RADAM.step()


radam_warmup()


@case(lambda: (randn(8, 4), randn(8, 1)))
def train_step_logs_item(x, y):
    """a training step on a model and SGD built at import time, returning loss.item()"""
    SGD.zero_grad()
    loss = F.mse_loss(NET(x), y)
    loss.backward()
    SGD.step()
    return loss.item()


@case(lambda: (randn(8, 4), randn(8, 1)))
def train_step_skips_nan(x, y):
    """a training step that skips the update when the loss is not finite"""
    SGD.zero_grad()
    loss = F.mse_loss(NET(x), y)
    if not torch.isfinite(loss):
        return None
    loss.backward()
    grad_norm = torch.nn.utils.clip_grad_norm_(NET.parameters(), max_norm=1.0)
    SGD.step()
    return loss.detach(), grad_norm


@case(lambda: (randn(8, 4), randn(8, 1)))
def radam_step(x, y):
    """opt.step() of torch.optim.RAdam after earlier steps: its step reads its step count"""
    RADAM.zero_grad()
    loss = F.mse_loss(RADAM_NET(x), y)
    loss.backward()
    RADAM.step()
    return loss.detach(), RADAM_NET.weight.detach().clone()


# -- torch.distributions ----------------------------------------------------------------------

@case(lambda: (randn(6), randn(6), randn(6)))
def normal_log_prob_validated(mu, log_sigma, x):
    """torch.distributions.Normal(mu, sigma, validate_args=True).log_prob(x), negated"""
    dist = torch.distributions.Normal(mu, log_sigma.exp(), validate_args=True)
    return -dist.log_prob(x).sum()


@case(lambda: (randn(4, 3), labels(4, 3)))
def categorical_entropy_logged(logits, actions):
    """a policy-gradient loss from Categorical(logits=...), entropy logged with .item()"""
    dist = torch.distributions.Categorical(logits=logits)
    entropy = dist.entropy().mean()
    log(f"entropy {entropy.item():.3f}")
    return -(dist.log_prob(actions)).mean() - 0.01 * entropy


@case(lambda: (randn(4, 4),))
def math_of_item(x):
    """math.sqrt(x.var().item()) as a Python float scale"""
    std = math.sqrt(x.var().item())
    return x / std
