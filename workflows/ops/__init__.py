"""The operator library. Each module registers its operators on import (see ``workflows.operator``)."""
