"""Captured tensors are named after where the user holds them: the qualified path from the
outermost module holding them (`model_layer4_1_bn1_bias`), whichever way the code reached
them (an nn.Sequential, a loop over an nn.ModuleList, a helper, a module argument)."""

import textwrap

from tests.test_cli import write
from tracecli.jobs.runner import trace_script

# The model lives in a module of its own, as torchvision's and timm's do: the frames
# that read its weights see them through `self`, `block` or torch's own loop variable
# `module` in nn.Sequential.forward, never through the script's `model`.
BLOCKS = """
    import torch
    from torch import nn


    class Block(nn.Module):
        def __init__(self, c):
            super().__init__()
            self.conv1 = nn.Conv2d(c, c, 3, padding=1)
            self.bn1 = nn.BatchNorm2d(c)
            self.scale = torch.tensor(0.5)  # a plain tensor attribute, neither parameter nor buffer

        def forward(self, x):
            return torch.relu(self.bn1(self.conv1(x))) * self.scale + x


    def run_block(block, x):
        return block(x)


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            layers = []
            for _ in range(2):
                layers.append(Block(4))
            self.layer4 = nn.Sequential(*layers)
            self.extra = nn.ModuleList([Block(4) for _ in range(2)])
            self.heads = nn.ModuleDict({"cls": nn.Linear(4, 3), "box": nn.Linear(4, 2)})

        def forward(self, x):
            x = self.layer4(x)
            for module in self.extra:
                x = run_block(module, x)
            pooled = x.mean((2, 3))
            return [head(pooled) for head in self.heads.values()]
"""


def _input_names(target: str) -> list[str]:
    job = trace_script(target, execute=False)
    return [v.name for v in job.calls[0].final.inputs]


def _expected(owner: str) -> list[str]:
    blocks = [f"layer4_{i}" for i in range(2)] + [f"extra_{i}" for i in range(2)]
    names = []
    for block in blocks:
        names += [f"{owner}_{block}_{n}" for n in ("conv1_weight", "conv1_bias", "bn1_running_mean",
                                                   "bn1_running_var", "bn1_weight", "bn1_bias", "scale")]
    return names + [f"{owner}_heads_{h}_{p}" for h in ("cls", "box") for p in ("weight", "bias")]


def test_a_global_models_weights_are_named_by_their_path_in_it(tmp_path):
    write(tmp_path, "blocks.py", BLOCKS)
    script = write(tmp_path, "infer.py", """
        import torch
        from blocks import Net

        model = Net().eval()


        def infer(x):
            return model(x)


        def sample_inputs(device):
            return (torch.randn(2, 4, 5, 5, device=device),)
    """)
    assert _input_names(script) == ["x", *_expected("model")]


def test_a_module_given_to_the_entry_names_its_weights(tmp_path):
    write(tmp_path, "blocks.py", BLOCKS)
    script = write(tmp_path, "given.py", """
        import torch
        from blocks import Net


        def infer(net, x):
            return net(x)


        def sample_inputs(device):
            return (Net().eval(), torch.randn(2, 4, 5, 5, device=device))
    """)
    assert _input_names(script)[2:] == _expected("net")


def test_a_step_function_called_from_main_names_the_weights_of_the_model_it_gets(cli, tmp_path):
    write(tmp_path, "blocks.py", BLOCKS)
    script = write(tmp_path, "steps.py", """
        import torch
        from blocks import Net


        def step(model, x):
            with torch.no_grad():
                return model(x)[0].sum()


        def main():
            net = Net().eval()
            for _ in range(2):
                step(net, torch.randn(2, 4, 5, 5))


        if __name__ == "__main__":
            main()
    """)
    result = cli("run", script, "--depth", "0", "--no-timing", "--color", "never")
    assert result.exit_code == 0, result.output
    assert "step: 2 calls, 1 distinct trace" in result.stdout
    assert f"def step({', '.join(['model', 'x', *_expected('model')])}):" in result.stdout


def test_a_loop_over_a_module_list_in_the_scripts_own_forward(tmp_path):
    script = write(tmp_path, "loop.py", textwrap.dedent(BLOCKS) + textwrap.dedent("""
        model = Net().eval()


        def infer(x):
            return model(x)


        def sample_inputs(device):
            return (torch.randn(2, 4, 5, 5, device=device),)
    """))
    assert _input_names(script) == ["x", *_expected("model")]
