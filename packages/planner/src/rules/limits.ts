/**
 * Planning stops here: far beyond the 50-step limit (the task then fails with
 * workflow_depth_exceeded), so a prompt of loops cannot make the planner build millions of steps.
 */
export const MAX_PLANNED_STEPS = 1000;
