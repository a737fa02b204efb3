"""Multiple-choice clarification: question policy, options, intent updates, simulated user."""
