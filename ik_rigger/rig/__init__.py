"""The Blender layer: reads armatures into core's descriptions and applies plans.

Functions here take the armature object and names as arguments and never read
``bpy.context`` for what to work on; they own every mode switch.
"""
