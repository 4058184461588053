"""The managers of a manager-based task (Isaac Lab's names): each turns one dict of named terms of the task config
into pure JAX functions of one env and owns its slice of the env's State."""

from fleetlab.envs.managers.action import ActionManager
from fleetlab.envs.managers.command import CommandManager
from fleetlab.envs.managers.curriculum import CurriculumManager
from fleetlab.envs.managers.event import EventManager
from fleetlab.envs.managers.metric import MetricManager
from fleetlab.envs.managers.observation import ObservationManager
from fleetlab.envs.managers.reward import RewardManager
from fleetlab.envs.managers.sensor import SensorManager
from fleetlab.envs.managers.termination import TerminationManager

__all__ = ["ActionManager", "CommandManager", "CurriculumManager", "EventManager", "MetricManager",
           "ObservationManager", "RewardManager", "SensorManager", "TerminationManager"]
