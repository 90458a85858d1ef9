import type { ConsoleOidcConfig } from './console.config';
import { identify, OidcSignInError } from './oidc';

const config: ConsoleOidcConfig = {
  issuer: 'https://idp.example.com',
  clientId: 'console',
  scopes: 'openid email profile',
  adminEmails: ['root@example.com'],
  adminGroups: ['platform'],
  adminClaim: 'gateway_admin',
  groupsClaim: 'groups',
  teamClaim: 'team',
};

describe('identify (OIDC claims to a console role)', () => {
  it('makes an admin of a listed e-mail (any case), a listed group, or a true admin claim', () => {
    expect(identify({ sub: '1', email: 'Root@Example.com' }, config).role).toBe('admin');
    expect(identify({ sub: '2', groups: ['x', 'platform'] }, config).role).toBe('admin');
    expect(identify({ sub: '3', gateway_admin: true }, config).role).toBe('admin');
  });

  it('makes a member of the team the team claim names', () => {
    expect(identify({ sub: '4', email: 'a@example.com', team: 'search' }, config)).toEqual({
      role: 'member',
      team: 'search',
      name: 'a@example.com',
    });
  });

  it('does not take a truthy non-boolean admin claim, nor an inherited property, as admin', () => {
    expect(() => identify({ sub: '5', gateway_admin: 'yes' }, config)).toThrow(OidcSignInError);
    expect(() => identify({ sub: '6' }, { ...config, teamClaim: 'constructor' })).toThrow(
      OidcSignInError,
    );
  });
});
