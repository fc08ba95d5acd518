"""Which entry a script's main block leads to: what a user would call the model, the
module or function the main block calls most with tensors, with the reason on stderr."""

import pytest

from tests.test_cli import write

MODEL = """
    import argparse

    import torch
    from torch import nn


    def precompute_freqs_cis(dim, end, theta=10000.0):
        freqs = 1.0 / (theta ** (torch.arange(0, dim, 2)[: (dim // 2)].float() / dim))
        t = torch.arange(end, device=freqs.device)
        freqs = torch.outer(t, freqs).float()
        return torch.polar(torch.ones_like(freqs), freqs)


    def apply_rotary_emb(x, freqs_cis):
        x_ = torch.view_as_complex(x.float().reshape(*x.shape[:-1], -1, 2))
        freqs_cis = freqs_cis.view(1, x_.shape[1], 1, x_.shape[-1])
        return torch.view_as_real(x_ * freqs_cis).flatten(3).type_as(x)


    class Attention(nn.Module):
        def __init__(self, dim, n_heads):
            super().__init__()
            self.n_heads, self.head_dim = n_heads, dim // n_heads
            self.wq = nn.Linear(dim, dim, bias=False)
            self.wk = nn.Linear(dim, dim, bias=False)
            self.wv = nn.Linear(dim, dim, bias=False)
            self.wo = nn.Linear(dim, dim, bias=False)

        def forward(self, x, freqs_cis):
            bsz, seqlen, _ = x.shape
            q = self.wq(x).view(bsz, seqlen, self.n_heads, self.head_dim)
            k = self.wk(x).view(bsz, seqlen, self.n_heads, self.head_dim)
            v = self.wv(x).view(bsz, seqlen, self.n_heads, self.head_dim)
            q, k = apply_rotary_emb(q, freqs_cis), apply_rotary_emb(k, freqs_cis)
            out = torch.nn.functional.scaled_dot_product_attention(
                q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=True)
            return self.wo(out.transpose(1, 2).reshape(bsz, seqlen, -1))
"""

LLAMA_MAIN = MODEL + """

    def main():
        parser = argparse.ArgumentParser()
        parser.add_argument("--dim", type=int, default=32)
        parser.add_argument("--heads", type=int, default=4)
        parser.add_argument("--seq", type=int, default=8)
        args = parser.parse_args()
        torch.manual_seed(0)
        attn = Attention(args.dim, args.heads).eval()
        freqs_cis = precompute_freqs_cis(args.dim // args.heads, args.seq)
        for _ in range(3):
            x = torch.randn(2, args.seq, args.dim)
            with torch.no_grad():
                y = attn(x, freqs_cis)
        print(tuple(y.shape))


    if __name__ == "__main__":
        main()
"""


def test_the_module_called_in_a_loop_is_chosen_over_a_helper_called_once(cli, tmp_path):
    script = write(tmp_path, "llama.py", LLAMA_MAIN)
    result = cli("run", script, "--depth", "0", "--no-timing", "--color", "never")
    assert result.exit_code == 0, result.output
    assert ("entry Attention (the nn.Module class the script's main block calls most with tensors: in a loop "
            "(llama.py:53); precompute_freqs_cis once, without tensors (llama.py:49))") in result.stderr
    assert "def Attention(x, freqs_cis, wq_weight, wk_weight, wv_weight, wo_weight):" in result.stdout
    assert "Attention: 3 calls, 1 distinct trace" in result.stdout


TRAINING = """
    import torch
    from torch import nn


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 2)

        def forward(self, x):
            return self.fc(x)


    def batches(n):
        return [(torch.randn(3, 4), torch.randn(3, 2)) for _ in range(n)]


    def train_step(model, opt, x, y):
        opt.zero_grad()
        loss = (model(x) - y).square().mean()
        loss.backward()
        opt.step()
        return loss.detach()


    def train(model, data):
        for x, _ in data:
            model(x)
{main}
"""


@pytest.mark.parametrize("main, entry, why", [
    # A step per batch: the step runs the model, as often.
    ("""
    def main():
        model = Net()
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for epoch in range(2):
            for x, y in batches(2):
                train_step(model, opt, x, y)


    if __name__ == "__main__":
        main()
    """, "train_step", "the function the script's main block calls most with tensors: in a loop (steps.py:36); "
                       "Net as often, inside train_step"),
    # A helper called once loops over the batches itself: the model it runs is called most.
    ("""
    if __name__ == "__main__":
        net = Net().eval()
        with torch.no_grad():
            train(net, batches(3))
    """, "Net", "the nn.Module class the script's main block calls most with tensors: in a loop (steps.py:29); "
                "train once (steps.py:34)"),
    # Called as often as a function beside it: the module.
    ("""
    def prepare(x):
        return x * 2


    def main():
        model = Net().eval()
        for x, _ in batches(2):
            with torch.no_grad():
                model(prepare(x))


    if __name__ == "__main__":
        main()
    """, "Net", "the nn.Module class the script's main block calls most with tensors: in a loop (steps.py:39); "
                "prepare in a loop (steps.py:39)"),
])
def test_training_and_evaluation_loops_lead_to_the_model_or_its_step(cli, tmp_path, main, entry, why):
    script = write(tmp_path, "steps.py", TRAINING.replace("{main}", main))
    result = cli("trace", script, "--depth", "0", "--color", "never")
    assert result.exit_code == 0, result.output
    assert f"entry {entry} ({why})" in result.stderr


def test_candidates_the_main_block_calls_alike_are_still_listed(cli, tmp_path):
    script = write(tmp_path, "alike.py", """
        import torch


        def first(x):
            return x + 1


        def second(x):
            return x * 2


        if __name__ == "__main__":
            for _ in range(2):
                x = torch.ones(3)
                first(x)
                second(x)
    """)
    result = cli("trace", script)
    assert result.exit_code == 2
    assert "the script's main block calls several candidates: first, second" in result.stderr
