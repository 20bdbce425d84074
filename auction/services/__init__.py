"""Services: the only writers. Each loads, decides (via the pure core), writes in one
transaction and publishes after commit. Named ``<entity>_<action>``."""
