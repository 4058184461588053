"""Brax PPO's networks and parameters: the network factory a config names, fresh parameters (play, and the
template a checkpoint is read into), and the checkpoint format.

A checkpoint, model_<iteration>.pickle, is a pickle of plain values only, like skrl-JAX's (read by
rl/checkpoint_reader.py with an unpickler that resolves no Python global): the (normalizer, policy, value)
parameter trees as flax msgpack bytes, plus the iteration, env steps, task and network config. It needs no torch:
a torch file did, and torch's import beside training held the GIL that MuJoCo Warp's callbacks inside the running
XLA program wait for (~1.3 s on a 45 s Humanoid run, benchmarks/results/2026-12-06_h200_brax). Brax's own
checkpoint (orbax) is not used: it is written by process 0 in place, and its network config is a pickled factory.
The torch files of fleetlab before 2026-12-06 (model_<iteration>.pt) are still read."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

from fleetlab.errors import FleetlabError

ACTIVATIONS = {"elu": jax.nn.elu, "relu": jax.nn.relu, "tanh": jnp.tanh, "selu": jax.nn.selu, "swish": jax.nn.swish,
               "silu": jax.nn.silu, "gelu": jax.nn.gelu}


def network_factory(cfg: dict):
    from brax.training.agents.ppo import networks as ppo_networks

    network = dict(cfg["network"])
    name = network.pop("activation")
    if name not in ACTIVATIONS:
        raise FleetlabError(f"agent.network.activation '{name}' is not one of {', '.join(ACTIVATIONS)}")
    return functools.partial(ppo_networks.make_ppo_networks, activation=ACTIVATIONS[name],
                             policy_hidden_layer_sizes=tuple(network.pop("policy_hidden_layer_sizes")),
                             value_hidden_layer_sizes=tuple(network.pop("value_hidden_layer_sizes")), **network)


def initial(brax_env, cfg: dict, seed: int):
    """(make_policy, fresh (normalizer, policy, value) params): the networks Brax's ppo.train builds for `cfg`."""
    from brax.training.acme import running_statistics, specs
    from brax.training.agents.ppo import networks as ppo_networks

    normalize = running_statistics.normalize if cfg["ppo"]["normalize_observations"] else (lambda x, _: x)
    network = network_factory(cfg)(brax_env.observation_size, brax_env.action_size,
                                   preprocess_observations_fn=normalize)

    @jax.jit  # one program, instead of one small compile per op of the eager init
    def init(key):
        key_policy, key_value = jax.random.split(key)
        normalizer = running_statistics.init_state(specs.Array((brax_env.observation_size,), jnp.dtype("float32")))
        return normalizer, network.policy_network.init(key_policy), network.value_network.init(key_value)

    return ppo_networks.make_inference_fn(network), init(jax.random.PRNGKey(seed))


CHECKPOINT_SUFFIX = ".pickle"


def to_checkpoint(params, cfg: dict, iteration: int, task_id: str, env_steps: int) -> dict:
    from flax import serialization

    trees = [serialization.to_bytes(jax.device_get(p)) for p in params]
    return {"brax_params": dict(zip(("normalizer", "policy", "value"), trees)), "iteration": int(iteration),
            "env_steps": int(env_steps), "task": task_id, "network": cfg["network"],
            "normalize_observations": bool(cfg["ppo"]["normalize_observations"])}


def from_checkpoint(template, checkpoint: dict, path: str):
    """The checkpoint's params in the structure of `template` (fresh params of this run's config): a checkpoint of
    other network sizes is a one-line error, not a shape error deep in XLA."""
    from flax import serialization

    saved = checkpoint["brax_params"]
    restored = []
    for name, fresh in zip(("normalizer", "policy", "value"), template):
        tree = serialization.msgpack_restore(saved[name]) if isinstance(saved[name], bytes) else \
            jax.tree.map(np.asarray, saved[name])  # a torch checkpoint of before 2026-12-06: CPU tensors
        want = jax.tree.map(np.shape, serialization.to_state_dict(fresh))
        got = jax.tree.map(np.shape, tree)
        if want != got:
            raise FleetlabError(f"'{path}' holds a {name} network of other sizes than this run's config (saved "
                                f"with network {checkpoint.get('network')}): play it with the agent.network.* "
                                "overrides it was trained with")
        restored.append(serialization.from_state_dict(fresh, jax.tree.map(jnp.asarray, tree)))
    return tuple(restored)
