"""One limb, planned: the options gathered from the parts, the requests (detected, mirrored, read
from a config) and the planning that lets every part plan in turn. Pure: no bpy.

It builds on ``core`` and ``parts`` only; ``rig`` writes what it plans to Blender.
"""
