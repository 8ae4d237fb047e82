"""Pure logic of IK Rigger: mathutils and the standard library only, no bpy.

Everything here works on plain descriptions of a skeleton, so it can be planned,
printed in a dry run and tested without a scene.
"""
