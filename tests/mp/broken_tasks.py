"""Task configs with one mistake each, for tests/test_bad_input.py (`--import broken_tasks`): each must stop when
the env is built with one line naming the task and the term, and exit code 2."""

import dataclasses
import os
import tempfile

from fleetlab import mdp
from fleetlab.envs import TaskEntry, register
from fleetlab.tasks.cartpole import agents
from fleetlab.tasks.cartpole.cfg import XML, cartpole
from fleetlab.tasks.go1.cfg import go1_flat

FOLDER = tempfile.mkdtemp(prefix="fleetlab-broken-")


def _mjcf(name: str, old: str, new: str) -> str:
    path = os.path.join(FOLDER, name)
    with open(XML) as f, open(path, "w") as out:
        text = f.read()
        assert old in text
        out.write(text.replace(old, new, 1))
    return path


def _scene(cfg, xml_path):
    return cfg.replace(scene=dataclasses.replace(cfg.scene, xml_path=xml_path))


BROKEN = {
    # a misspelt attribute: MuJoCo's own message names it and the line
    "Broken-Mjcf-v0": lambda: _scene(cartpole(), _mjcf("attribute.xml", 'type="slide"', 'tpye="slide"')),
    "Broken-Integrator-v0": lambda: _scene(cartpole(), _mjcf("implicit.xml", 'integrator="Euler"',
                                                               'integrator="implicit"')),
    # the Go1's 12 actuators, of which the action terms drive the 4 hips only
    "Broken-Actuators-v0": lambda: go1_flat().replace(
        actions={"hips": mdp.JointPositionAction(joints=mdp.Joints(".*_hip_joint"), scale=0.25)}),
    "Broken-ObsShape-v0": lambda: cartpole().replace(observations={"policy": mdp.ObsGroup(terms={
        "alive": mdp.ObsTerm(func=mdp.is_alive)})}),
    "Broken-Signature-v0": lambda: cartpole().replace(rewards={
        "pole_pos": mdp.RewTerm(func=mdp.joint_pos_target_l2, weight=-1.0, params={"goal": 0.0})}),
    "Broken-JointName-v0": lambda: cartpole().replace(rewards={
        "pole_pos": mdp.RewTerm(func=mdp.joint_pos_target_l2, weight=-1.0,
                                params={"target": 0.0, "joints": mdp.Joints("cart_to_pol")})}),
    "Broken-BodyName-v0": lambda: go1_flat().replace(terminations={
        "base_contact": mdp.DoneTerm(func=mdp.illegal_contact,
                                     params={"sensor_cfg": mdp.SensorBodies("contact_forces", "torso"),
                                             "threshold": 1.0})}),
    "Broken-RewardDtype-v0": lambda: cartpole().replace(rewards={
        "pole_pos": mdp.RewTerm(func=mdp.joint_pos_rel, weight=-1.0)}),
}
for task_id, make_cfg in BROKEN.items():
    register(TaskEntry(task_id, make_cfg, description="a mistake to be caught", agents=agents.ALL))
