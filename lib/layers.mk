# lib/layers.mk -- the layer rule of lib/, in one place.
#
# Each folder of lib/ is a layer.  A layer may include the headers of, and
# call, only the layers named in its LAYER_ line; a third-party header may
# be included only in the layers whose EXT_ line names it.  The rule runs
# one way, bottom (base) to top (daemon, and tool beside it); cmd/ sits
# above both.
#
# Enforced twice by `make check-layers` (test/layers/): an include check
# over the sources, and a link of each layer's archive against only the
# archives below it, so an upward call fails to link.  LAYERS lists the
# folders top to bottom, the order in which their archives are linked.

LAYERS		 = daemon tool actions server api config core codec base

LAYER_base	 =
LAYER_codec	 = base
LAYER_core	 = codec base
LAYER_config	 = core codec base
LAYER_api	 = config codec base
LAYER_server	 = core config codec base
LAYER_actions	 = api config codec base
LAYER_daemon	 = actions server api config core codec base
LAYER_tool	 = api config core codec base
LAYER_cmd	 = daemon tool config base

# Third-party headers, and the only layers that may include them.
# openssl/ and mbedtls/: the TLS library under libcurl, which api/'s
# kube_tls.c reaches through CURLOPT_SSL_CTX_FUNCTION to hold the server
# certificate to client-go's rules (one or the other is built in).
EXT_HEADERS	 = jansson.h yaml.h curl/ ev.h openssl/ mbedtls/
EXT_base	 =
EXT_codec	 = jansson.h
EXT_core	 =
EXT_config	 = yaml.h
EXT_api		 = curl/ ev.h openssl/ mbedtls/
EXT_server	 = ev.h
EXT_actions	 = ev.h
EXT_daemon	 = ev.h
EXT_tool	 = ev.h
EXT_cmd		 =
