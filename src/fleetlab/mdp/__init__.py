"""fleetlab's term library, as Isaac Lab's isaaclab.envs.mdp: the observation, reward, termination, event,
command and metric functions of the built-in tasks, with Isaac Lab's names and meanings. Every term is a pure JAX
function of one env, `func(env, **params)` (envs/term_env.py says what `env` holds); a task config names them:

    from fleetlab import mdp
    RewTerm(func=mdp.track_lin_vel_xy_exp, weight=1.5, params={"std": 0.5, "command_name": "base_velocity"})
"""

from fleetlab.envs.cfg import (  # noqa: F401  (the config types, so that a task imports one module)
    Bodies,
    ContactSensorCfg,
    CurrTerm,
    DoneTerm,
    EventTerm,
    GaussianNoise,
    Geoms,
    JointEffortAction,
    JointPositionAction,
    Joints,
    ManagerBasedRLEnvCfg,
    MetricTerm,
    ModelEntries,
    ObsGroup,
    ObsTerm,
    RewTerm,
    SceneCfg,
    SensorBodies,
    Sites,
    UniformNoise,
)
from fleetlab.mdp.commands import UniformVelocityCommandCfg, VelocityRanges  # noqa: F401
from fleetlab.mdp.curriculums import *  # noqa: F401,F403
from fleetlab.mdp.events import *  # noqa: F401,F403
from fleetlab.mdp.metrics import *  # noqa: F401,F403
from fleetlab.mdp.observations import *  # noqa: F401,F403
from fleetlab.mdp.rewards import *  # noqa: F401,F403
from fleetlab.mdp.terminations import *  # noqa: F401,F403
from fleetlab.sim.options import PhysicsOptions  # noqa: F401
from fleetlab.terrains.cfg import *  # noqa: F401,F403  (terrain configs, for the scene)
