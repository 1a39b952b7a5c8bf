"""A stack is one ``Pulumi.<stack>.yaml``: everything about it before any resource exists, pure (no Pulumi).

The order is parse -> validate -> plan: ``spec/`` types the config, ``validate/`` collects every problem at once (cloud
limits from one sourced table), ``plan/`` turns spec + catalog into one ``StackPlan`` that every view reads."""
