"""Remote agents: a wire format, an agent server, the ``remote`` agent and a policy helper.

Modules, one concept each: ``wire`` (the messages), ``server`` (any endpoint over HTTP),
``policy`` (serving your own policy), ``served`` (serving a registered agent), ``link`` (the
client's connection), ``client`` (the ``remote`` agent), ``convert`` (sortie records to and
from messages). Nothing is imported here, so ``sortie.remote.policy`` stays light.
"""
