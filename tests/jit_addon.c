/*
 * jit_addon.c - a Node.js native addon (N-API) for tests/92-jit.t: work(n)
 * spins in C_work, C compiled without frame pointers, called from JS.
 */
#include <node_api.h>

__attribute__((noinline)) static double c_work(int n)
{
	volatile double x = 0;
	for (int i = 0; i < n; i++)
		x += i * 0.5;
	return x;
}

static napi_value work(napi_env env, napi_callback_info info)
{
	size_t argc = 1;
	napi_value argv[1], r;
	int32_t n = 0;

	napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
	if (argc > 0)
		napi_get_value_int32(env, argv[0], &n);
	napi_create_double(env, c_work(n), &r);
	return r;
}

NAPI_MODULE_INIT()
{
	napi_value fn;

	napi_create_function(env, "work", NAPI_AUTO_LENGTH, work, NULL, &fn);
	napi_set_named_property(env, exports, "work", fn);
	return exports;
}
