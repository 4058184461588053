"""The Brax policy rebuilt in torch from its parameters, for deployment without JAX: policy.pt (TorchScript) and
policy.onnx, both mapping observations to the deterministic action, as rsl_rl's exporter does for its policies.

Brax's policy for a config is: observations normalized by the running mean/std (when normalize_observations),
then its MLP of Dense layers `hidden_0..` with the activation between them, then
- distribution "normal" (our configs): a last Dense (`Dense_0`) whose output is the action mean;
- distribution "tanh_normal" (Brax's default): the MLP's last layer gives [mean | std]; the action is tanh(mean).
"""

from __future__ import annotations

import os

import numpy as np
import torch

TORCH_ACTIVATIONS = {"elu": torch.nn.ELU, "relu": torch.nn.ReLU, "tanh": torch.nn.Tanh, "selu": torch.nn.SELU,
                     "swish": torch.nn.SiLU, "silu": torch.nn.SiLU, "gelu": torch.nn.GELU}


class BraxPolicy(torch.nn.Module):
    def __init__(self, mean: np.ndarray, std: np.ndarray, layers: list[tuple[np.ndarray, np.ndarray]],
                 activation: str, action_size: int, tanh: bool):
        super().__init__()
        self.register_buffer("obs_mean", torch.as_tensor(np.asarray(mean), dtype=torch.float32))
        self.register_buffer("obs_std", torch.as_tensor(np.asarray(std), dtype=torch.float32))
        modules: list[torch.nn.Module] = []
        for i, (kernel, bias) in enumerate(layers):
            linear = torch.nn.Linear(kernel.shape[0], kernel.shape[1])
            with torch.no_grad():
                linear.weight.copy_(torch.as_tensor(np.array(kernel).T))
                linear.bias.copy_(torch.as_tensor(np.array(bias)))
            modules.append(linear)
            if i < len(layers) - 1:
                modules.append(TORCH_ACTIVATIONS[activation]())
        self.mlp = torch.nn.Sequential(*modules)
        self.action_size, self.tanh = action_size, tanh

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        mean = self.mlp((obs - self.obs_mean) / self.obs_std)[..., : self.action_size]
        return torch.tanh(mean) if self.tanh else mean


def torch_policy(params, cfg: dict, action_size: int) -> BraxPolicy:
    normalizer, policy, _ = params
    net = policy["params"]
    tanh = cfg["network"].get("distribution_type", "tanh_normal") == "tanh_normal"
    hidden = net if tanh else net["MLP_0"]
    layers = [(hidden[f"hidden_{i}"]["kernel"], hidden[f"hidden_{i}"]["bias"]) for i in range(len(hidden))]
    if not tanh:
        layers.append((net["Dense_0"]["kernel"], net["Dense_0"]["bias"]))
    if cfg["ppo"]["normalize_observations"]:
        mean, std = np.asarray(normalizer.mean), np.asarray(normalizer.std)
    else:
        mean, std = np.zeros(layers[0][0].shape[0], np.float32), np.ones(layers[0][0].shape[0], np.float32)
    return BraxPolicy(mean, std, layers, cfg["network"]["activation"], action_size, tanh).eval()


def export_policy(params, cfg: dict, observation_size: int, folder: str) -> list[str]:
    model = torch_policy(params, cfg, _action_size(params, cfg))
    os.makedirs(folder, exist_ok=True)
    paths = [os.path.join(folder, "policy.pt"), os.path.join(folder, "policy.onnx")]
    torch.jit.script(model).save(paths[0])
    torch.onnx.export(model, (torch.zeros(1, observation_size),), paths[1], input_names=["obs"],
                      output_names=["actions"], dynamic_axes={"obs": {0: "batch"}, "actions": {0: "batch"}},
                      dynamo=False)
    return paths


def _action_size(params, cfg: dict) -> int:
    net = params[1]["params"]
    if cfg["network"].get("distribution_type", "tanh_normal") == "tanh_normal":
        return net[f"hidden_{len(net) - 1}"]["bias"].shape[0] // 2
    return net["Dense_0"]["bias"].shape[0]
